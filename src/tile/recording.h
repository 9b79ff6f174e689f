// The state of one tile recording (record.h), shared by the recorder's files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/error.h"
#include "kiln/tile/program.h"
#include "kiln/tile/record.h"

namespace kiln::tile::detail {

struct View {
  int param;
  Cells cells;
  ValueRef value;  // the tile.view op's result
};

class Recording {
 public:
  Recording(std::string name, std::vector<ParamDecl> params, const Options& options);
  ~Recording();

  dsl::Tracer& tracer() { return *tracer_; }
  const std::string& name() const { return name_; }
  const ParamDecl& decl(int i) const { return params_.at(size_t(i)); }
  const ValueRef& array(int i) const { return arrays_.at(size_t(i)); }
  const View& view(ParamRef p) const { return views_.at(size_t(p.view)); }
  ParamRef add_view(int param, const Cells& c);
  // Set when a parameter is read or written at computed addresses: its loads stay scalar.
  void note_pointer_access(int param) { pointer_access_.at(size_t(param)) = true; }
  // A part of a cell written with store_sub: its rows are `last` elements long, and a vector of
  // the parameter must not straddle two parts.
  void note_part_width(int param, int64_t last) { part_widths_.emplace_back(param, last); }
  const std::optional<Grid>& grid() const { return grid_; }

  // Error{kind}: "kernel `k`: op #N `name`: what", N the number of the op being recorded.
  [[noreturn]] void fail(const std::string& kind, const std::string& op, const std::string& what) const;
  // Error{kind}: "kernel `k`: what", for what is wrong before any op.
  [[noreturn]] void fail(const std::string& kind, const std::string& what) const;
  // "argument 0 (In)"
  std::string argument(int i) const;

  Traced close();

 private:
  void check_cells();
  int vector_width(int param) const;

  std::string name_;
  std::vector<ParamDecl> params_;
  ir::Kernel kernel_;
  std::optional<dsl::Tracer> tracer_;
  std::vector<ValueRef> arrays_;
  std::vector<View> views_;
  std::vector<bool> pointer_access_;
  std::vector<std::pair<int, int64_t>> part_widths_;
  std::optional<Grid> grid_;
  Recording* previous_;
};

}  // namespace kiln::tile::detail
