// render(prog): a recorded tile kernel as cuda_tile text, in seed 04's form.
//
// The mapping, op by op (kiln IR with tile ops -> cuda_tile):
// - A parameter is an entry argument `%argN: tile<ptr<T>>`. At its first use it becomes
//   `assume div_by<16>` (the 16-byte alignment Entry::launch checks), then, for a view, a
//   `make_tensor_view` over the whole extent (row-major strides) and a `make_partition_view` cut
//   into the view's cells (tile, padding_value, dim_map). A dyn_dim extent prints `?` in the
//   tensor_view type and is given as a value: the grid's blocks along its axis
//   (`get_num_tile_blocks`) times the tile; strides that depend on it are values too.
// - tile.block_id is `get_tile_block_id` (three results, one per grid axis), printed at the first
//   use of that axis; load_cell and store_cell index the cell by the block ids of the axes the
//   cells follow (a free dimension of load_cell takes cell 0).
// - Memory ops are threaded on a token chain that starts at `make_token`: tile.load_cell and
//   tile.load_at are `load_view_tko`, tile.store_cell and tile.store_sub `store_view_tko` (a
//   store_sub through a partition view of its own tile shape, at index cell * parts + part),
//   tile.load and tile.store (Shared parameters) `load_ptr_tko` and `store_ptr_tko` at an element
//   offset with explicit strides, tile.atomic_* `atomic_rmw_tko relaxed device` there (mode addf,
//   add, max, umax, min, umin); the scatters widen the parameter's pointer to a tile of pointers
//   (`reshape`, `broadcast`, `offset` by the offsets) and store or atomic_rmw through it. An extent
//   prints as `extent = [..]` (the mask cuda_tile's ops take, by its bounds), a load's padding as
//   `padding_value`. Each takes the current token and gives the next.
// - A `for` that carries values (run promote_vars first, on a copy) prints them as iter_values; a
//   loop or if whose regions touch memory carries the token too, after the other values. The
//   body's yield is `continue`; an if's regions end with `yield`. while loops have no form here
//   (Error{render.unsupported}).
// - Elementwise ops take cuda_tile's names (names.h: addf, addi, cmpf, ftof, exp, ...); float
//   add, sub, mul, div, fma and sqrt print rounding<nearest_even>, integer div, rem, min, max and
//   shr their signedness. Scalars (index arithmetic, loop counters) are rank-0 tiles: tile<i32>.
//   tile.full and const are `constant`; reductions `reduce` with dim and combiner (and `reshape`
//   for keepdims); tile.broadcast `broadcast` (after a `reshape` when the rank grows);
//   tile.transpose `permute [1, 0]`; tile.mma `mmaf`.
//
// Values are numbered in the order they are printed. Parameters, views, block ids and integer
// constants print where they are first used, as the seed's text shows them. Reads too: C++ leaves
// the order in which a call's arguments are evaluated to the compiler (GCC records
// `load_cell(a) + load_cell(b)` b first), so a read prints where its value is first needed, but
// never after a write or a control op recorded after it; reads commute with reads, so the text is
// the same whichever order the compiler recorded them in. Everything else prints in recorded order.
// What is printed lazily inside a region is forgotten when the region closes (SSA: it does not
// dominate what follows), and printed again at its next use.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "kiln/error.h"
#include "kiln/passes/passes.h"
#include "kiln/tile/program.h"
#include "names.h"

namespace kiln::tile {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string int_list(const std::vector<int64_t>& v, const char* sep = ", ") {
  std::vector<std::string> parts;
  for (int64_t x : v) parts.push_back(std::to_string(x));
  return "[" + join(parts, sep) + "]";
}

std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// `<f64: 1.0>`, `<i32: 8>`, `<i1: true>`: a constant's payload.
std::string constant_text(ir::Scalar s, const ir::AttrValue& v) {
  std::string t = s == ir::Scalar::Bool ? "i1" : std::string(ir::scalar_name(s));
  std::string x;
  if (s == ir::Scalar::Bool) {
    x = v.i ? "true" : "false";
  } else if (ir::is_float(s)) {
    x = float_text(v.tag == ir::AttrValue::Tag::Float ? v.f : double(v.i));
  } else {
    x = std::to_string(v.tag == ir::AttrValue::Tag::Float ? int64_t(v.f) : v.i);
  }
  return "<" + t + ": " + x + ">";
}

std::vector<int64_t> ints_attr(const Op& op, ir::AttrKey k) {
  const ir::AttrValue* a = op.attr(k);
  return a ? a->ints : std::vector<int64_t>{};
}

bool is_read(const Op& op) {
  return op.kind == OpKind::TileLoadCell || op.kind == OpKind::TileLoadAt || op.kind == OpKind::TileLoad;
}

// Printed at first use: what the recorder makes once and the seed prints where it is needed.
bool is_lazy(const Op& op) {
  return is_read(op) || op.kind == OpKind::TileView || op.kind == OpKind::TileBlockId ||
         (op.kind == OpKind::Const && op.type.is_scalar() && ir::is_int(op.type.scalar));
}

bool touches_memory(const ir::Region& r) {
  bool any = false;
  ir::walk(r, [&](const Op& op) { any = any || op.has(ir::kReadsMemory) || op.has(ir::kWritesMemory); });
  return any;
}

// An extent, stride or index: a number known now, or a value printed earlier.
struct Dim {
  int64_t n = 0;
  std::string name;  // set when the value is only known at run time
  bool known() const { return name.empty(); }
};

class Renderer {
 public:
  explicit Renderer(const ir::Kernel& k) : k_(k) {
    index(k_.body);
    for (size_t i = 0; i < k_.params.size(); ++i) param_of_[k_.params[i].value] = int(i);
  }

  std::string run() {
    std::vector<std::string> args;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      args.push_back("%arg" + std::to_string(i) + ": " + pointer_type(int(i)));
    }
    out_ = "cuda_tile.module @m {\n  entry @" + k_.name + "(" + join(args) + ") {\n";
    depth_ = 2;
    s_.token = fresh();
    line(s_.token + " = make_token : token");
    region(k_.body);
    line("return");
    out_ += "  }\n}";
    return out_;
  }

 private:
  using Printer = void (Renderer::*)(const Op&);

  // What a region sees: names of values and of what was printed lazily, and the current token.
  struct TensorView {
    std::string name;
    std::string type;
  };

  struct Scope {
    std::unordered_map<Value, std::string> names;
    std::map<std::string, TensorView> tensor_views;  // by parameter and cells
    std::map<int, std::string> pointers;             // parameter -> its assumed pointer
    std::map<std::string, std::string> sub_views;    // store_sub's partition views, by view and shape
    std::map<int, std::string> block_ids;            // grid axis -> get_tile_block_id's result
    std::map<int, std::string> block_counts;         // grid axis -> get_num_tile_blocks's result
    std::string token;
  };

  // --- printing ---

  std::string fresh() { return "%" + std::to_string(next_++); }
  void line(const std::string& s) { out_ += std::string(size_t(depth_) * 2, ' ') + s + "\n"; }
  [[noreturn]] void unsupported(const Op& op, const std::string& why) const {
    throw Error("render.unsupported",
                "kernel `" + k_.name + "`: `" + std::string(op.info().name) + "` has no cuda_tile form here: " + why);
  }

  std::string type(const ir::Type& t) const { return tile_text(t); }
  std::string type_of(Value v) const { return type(k_.type_of(v)); }
  std::string element(int param) const {
    ir::Scalar s = k_.params.at(size_t(param)).type.scalar;
    return s == ir::Scalar::Bool ? "i1" : std::string(ir::scalar_name(s));
  }
  std::string pointer_type(int param) const { return "tile<ptr<" + element(param) + ">>"; }

  void index(const ir::Region& r) {
    for (const Op& op : r.ops) {
      for (Value v : op.results()) def_[v] = &op;
      for (const ir::Region& sub : op.regions) index(sub);
    }
  }

  // The printed name of `v`, printing its op first when it is printed at first use.
  std::string name(Value v) {
    auto it = s_.names.find(v);
    if (it != s_.names.end()) return it->second;
    auto def = def_.find(v);
    if (def == def_.end() || !is_lazy(*def->second)) {
      throw Error("render.internal",
                  "kernel `" + k_.name + "`: value %" + std::to_string(v) + " is used before it is printed");
    }
    print(*def->second);
    return s_.names.at(v);
  }
  std::vector<std::string> names(std::span<const Value> vs) {
    std::vector<std::string> r;
    for (Value v : vs) r.push_back(name(v));
    return r;
  }

  void region(const ir::Region& r) {
    std::vector<const Op*> pending;  // reads not printed yet, in recorded order
    auto flush = [&] {
      for (const Op* op : pending) {
        if (!s_.names.count(op->result)) print(*op);
      }
      pending.clear();
    };
    for (const Op& op : r.ops) {
      if (is_read(op)) {
        pending.push_back(&op);
      } else if (is_lazy(op)) {
        continue;
      } else {
        if (op.has(ir::kWritesMemory) || op.has(ir::kControl) || op.has(ir::kTerminator) || op.has(ir::kSideEffect))
          flush();
        print(op);
      }
    }
    flush();
  }

  void print(const Op& op) {
    static const std::map<OpKind, Printer> by_kind = {
        {OpKind::Const, &Renderer::constant},
        {OpKind::Select, &Renderer::select},
        {OpKind::TileView, &Renderer::view},
        {OpKind::TileBlockId, &Renderer::block_id},
        {OpKind::TileLoadCell, &Renderer::load_view},
        {OpKind::TileLoadAt, &Renderer::load_view},
        {OpKind::TileStoreCell, &Renderer::store_view},
        {OpKind::TileStoreSub, &Renderer::store_view},
        {OpKind::TileLoad, &Renderer::load_ptr},
        {OpKind::TileStore, &Renderer::store_ptr},
        {OpKind::TileAtomicAdd, &Renderer::store_ptr},
        {OpKind::TileAtomicMax, &Renderer::store_ptr},
        {OpKind::TileAtomicMin, &Renderer::store_ptr},
        {OpKind::TileScatter, &Renderer::scatter},
        {OpKind::TileScatterAdd, &Renderer::scatter},
        {OpKind::TileScatterMax, &Renderer::scatter},
        {OpKind::TileScatterMin, &Renderer::scatter},
        {OpKind::TileFull, &Renderer::full},
        {OpKind::TileBroadcast, &Renderer::broadcast},
        {OpKind::TileReduceSum, &Renderer::reduce},
        {OpKind::TileReduceMax, &Renderer::reduce},
        {OpKind::TileReduceMin, &Renderer::reduce},
        {OpKind::TileTranspose, &Renderer::permute},
        {OpKind::TileMma, &Renderer::mma},
        {OpKind::For, &Renderer::for_loop},
        {OpKind::If, &Renderer::if_op},
        {OpKind::Yield, &Renderer::terminator},
        {OpKind::Continue, &Renderer::terminator},
        {OpKind::Break, &Renderer::terminator},
    };
    static const std::map<ir::OpFamily, Printer> by_family = {
        {ir::OpFamily::Arith, &Renderer::elementwise}, {ir::OpFamily::Bitwise, &Renderer::elementwise},
        {ir::OpFamily::Math, &Renderer::elementwise},  {ir::OpFamily::Compare, &Renderer::compare},
        {ir::OpFamily::Cast, &Renderer::cast},
    };
    if (auto k = by_kind.find(op.kind); k != by_kind.end()) return (this->*k->second)(op);
    if (auto f = by_family.find(op.info().family); f != by_family.end()) return (this->*f->second)(op);
    unsupported(op, "render prints tile ops, elementwise ops, for and if");
  }

  // Names op's first result and prints `%n = text`.
  void define(const Op& op, const std::string& text) {
    std::string n = fresh();
    s_.names[op.result] = n;
    line(n + " = " + text);
  }

  // --- values ---

  void constant(const Op& op) {
    define(op, "constant " + constant_text(op.type.scalar, *op.attr(ir::AttrKey::Value)) + " : " + type(op.type));
  }

  void full(const Op& op) { constant(op); }

  std::string int_constant(int64_t v) {
    std::string n = fresh();
    line(n + " = constant <i32: " + std::to_string(v) + "> : tile<i32>");
    return n;
  }

  // Arithmetic, bitwise and math ops, whose operands share one type.
  void elementwise(const Op& op) {
    ir::Scalar s = k_.type_of(op.operands.front()).scalar;
    std::string text = cuda_tile_name(op.kind, s) + " " + join(names(op.operands));
    static const OpKind rounded[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Fma, OpKind::Sqrt};
    static const OpKind signed_ops[] = {OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max, OpKind::Shr};
    if (ir::is_float(s) && std::find(std::begin(rounded), std::end(rounded), op.kind) != std::end(rounded)) {
      text += " rounding<nearest_even>";
    }
    if (ir::is_int(s) && std::find(std::begin(signed_ops), std::end(signed_ops), op.kind) != std::end(signed_ops)) {
      text += ir::is_signed_int(s) ? " signed" : " unsigned";
    }
    define(op, text + " : " + type(op.type));
  }

  void compare(const Op& op) {
    static const std::map<OpKind, const char*> predicate = {
        {OpKind::Eq, "equal"},        {OpKind::Ne, "not_equal"},
        {OpKind::Lt, "less_than"},    {OpKind::Le, "less_than_or_equal"},
        {OpKind::Gt, "greater_than"}, {OpKind::Ge, "greater_than_or_equal"},
    };
    const Value lhs = op.operand(ir::ops::Binary::lhs);
    ir::Scalar s = k_.type_of(lhs).scalar;
    std::string text = cuda_tile_name(op.kind, s) + " " + predicate.at(op.kind);
    std::string operands = join(names(op.operands));
    if (ir::is_float(s)) {
      // IEEE: every comparison with a NaN is false except not_equal.
      text += std::string(op.kind == OpKind::Ne ? " unordered " : " ordered ") + operands;
    } else {
      text += " " + operands + (ir::is_signed_int(s) ? ", signed" : ", unsigned");
    }
    define(op, text + " : " + type_of(lhs) + " -> " + type(op.type));
  }

  void select(const Op& op) {
    define(op, "select " + join(names(op.operands)) + " : " + type_of(op.operand(ir::ops::Select::condition)) + ", " +
                   type(op.type));
  }

  void cast(const Op& op) {
    const Value x = op.operand(ir::ops::Unary::x);
    const ir::Type& from = k_.type_of(x);
    std::string n = op.kind == OpKind::Bitcast ? "bitcast" : cuda_tile_name(op.kind, from.scalar, op.type.scalar);
    std::string rounding = ir::is_float(op.type.scalar) && op.kind == OpKind::Cast ? " rounding<nearest_even>" : "";
    define(op, n + " " + name(x) + rounding + " : " + type(from) + " -> " + type(op.type));
  }

  void broadcast(const Op& op) {
    const ir::Type& from = k_.type_of(op.operand(ir::ops::TileUnary::tile));
    std::string src = name(op.operand(ir::ops::TileUnary::tile));
    if (from.rank != op.type.rank) {
      // cuda_tile's broadcast keeps the rank: a rank-0 tile becomes a tile of ones first.
      ir::Type ones = ir::Type::tile(from.scalar, op.type.rank, {1, 1, 1, 1});
      std::string r = fresh();
      line(r + " = reshape " + src + " : " + type(from) + " -> " + type(ones));
      src = r;
      define(op, "broadcast " + src + " : " + type(ones) + " -> " + type(op.type));
      return;
    }
    define(op, "broadcast " + src + " : " + type(from) + " -> " + type(op.type));
  }

  void reduce(const Op& op) {
    static const std::map<OpKind, OpKind> combiner = {{OpKind::TileReduceSum, OpKind::Add},
                                                      {OpKind::TileReduceMax, OpKind::Max},
                                                      {OpKind::TileReduceMin, OpKind::Min}};
    const ir::Type& from = k_.type_of(op.operand(ir::ops::TileUnary::tile));
    int dim = int(op.get<ir::AttrKey::Dim>());
    ir::Scalar s = from.scalar;
    ir::AttrValue identity = ir::AttrValue::of_float(op.kind == OpKind::TileReduceSum   ? 0.0
                                                     : op.kind == OpKind::TileReduceMax ? -INFINITY
                                                                                        : INFINITY);
    if (!ir::is_float(s)) {
      identity = ir::AttrValue::of_int(op.kind == OpKind::TileReduceSum   ? 0
                                       : op.kind == OpKind::TileReduceMax ? (ir::is_signed_int(s) ? INT64_MIN : 0)
                                                                          : INT64_MAX);
    }
    // The reduced dimension goes; keepdims puts it back with length 1.
    ir::Type reduced = from;
    reduced.shape = {};
    reduced.rank = 0;
    for (int d = 0; d < from.rank; ++d) {
      if (d != dim) reduced.shape[reduced.rank++] = from.shape[size_t(d)];
    }
    std::string text = "reduce " + name(op.operand(ir::ops::TileUnary::tile)) + " dim=" + std::to_string(dim) +
                       " identity=" + constant_text(s, identity) +
                       " combiner=" + cuda_tile_name(combiner.at(op.kind), s) + " : " + type(from) + " -> " +
                       type(reduced);
    if (!op.flag(ir::AttrKey::Keepdims)) return define(op, text);
    std::string r = fresh();
    line(r + " = " + text);
    define(op, "reshape " + r + " : " + type(reduced) + " -> " + type(op.type));
  }

  void permute(const Op& op) {
    const Value t = op.operand(ir::ops::TileUnary::tile);
    define(op, "permute " + name(t) + " [1, 0] : " + type_of(t) + " -> " + type(op.type));
  }

  void mma(const Op& op) {
    std::vector<std::string> types;
    for (Value v : op.operands) types.push_back(type_of(v));
    define(op, cuda_tile_name(op.kind, op.type.scalar) + " " + join(names(op.operands)) + " : " + join(types));
  }

  // --- parameters, views and block ids ---

  // The parameter's pointer, with the alignment Entry::launch checks.
  std::string pointer(int param) {
    auto it = s_.pointers.find(param);
    if (it != s_.pointers.end()) return it->second;
    std::string n = fresh();
    line(n + " = assume div_by<16>, %arg" + std::to_string(param) + " : " + pointer_type(param));
    return s_.pointers[param] = n;
  }

  std::string block_id_of(int axis) {
    auto it = s_.block_ids.find(axis);
    if (it != s_.block_ids.end()) return it->second;
    std::string r[3] = {fresh(), fresh(), fresh()};
    line(r[0] + ", " + r[1] + ", " + r[2] + " = get_tile_block_id : tile<i32>");
    return s_.block_ids[axis] = r[axis];
  }

  std::string block_count(int axis) {
    auto it = s_.block_counts.find(axis);
    if (it != s_.block_counts.end()) return it->second;
    std::string r[3] = {fresh(), fresh(), fresh()};
    line(r[0] + ", " + r[1] + ", " + r[2] + " = get_num_tile_blocks : tile<i32>");
    return s_.block_counts[axis] = r[axis];
  }

  void block_id(const Op& op) { s_.names[op.result] = block_id_of(int(op.get<ir::AttrKey::Axis>())); }

  // a * b, printing a muli when either is a run-time value.
  Dim times(const Dim& a, const Dim& b) {
    if (a.known() && b.known()) return Dim{a.n * b.n, {}};
    if (a.known() && a.n == 1) return b;
    if (b.known() && b.n == 1) return a;
    std::string x = a.known() ? int_constant(a.n) : a.name;
    std::string y = b.known() ? int_constant(b.n) : b.name;
    std::string r = fresh();
    line(r + " = muli " + x + ", " + y + " : tile<i32>");
    return Dim{0, r};
  }

  static std::string dim_text(const Dim& d) { return d.known() ? std::to_string(d.n) : d.name; }
  static std::string dim_type(const Dim& d) { return d.known() ? std::to_string(d.n) : "?"; }

  // The whole tensor of a view's parameter, row-major; dyn_dim extents come from the grid.
  TensorView tensor_view(int param, const Op& view) {
    std::vector<int64_t> extent = ints_attr(view, ir::AttrKey::Extent);
    std::vector<int64_t> tile = ints_attr(view, ir::AttrKey::Tile);
    std::vector<int64_t> along = ints_attr(view, ir::AttrKey::Along);
    std::string key = std::to_string(param) + int_list(extent) + int_list(tile) + int_list(along);
    if (auto it = s_.tensor_views.find(key); it != s_.tensor_views.end()) return it->second;
    std::string ptr = pointer(param);
    std::vector<Dim> shape;
    for (size_t d = 0; d < extent.size(); ++d) {
      shape.push_back(extent[d] == dyn_dim ? times(Dim{0, block_count(int(along[d]))}, Dim{tile[d], {}})
                                           : Dim{extent[d], {}});
    }
    std::vector<Dim> strides(shape.size(), Dim{1, {}});
    for (size_t d = shape.size() - 1; d-- > 0;) strides[d] = times(strides[d + 1], shape[d + 1]);
    std::vector<std::string> shape_text, stride_text, shape_type, stride_type, dynamic;
    for (size_t d = 0; d < shape.size(); ++d) {
      shape_text.push_back(dim_text(shape[d]));
      stride_text.push_back(dim_text(strides[d]));
      shape_type.push_back(dim_type(shape[d]));
      stride_type.push_back(dim_type(strides[d]));
      if (!shape[d].known()) dynamic.push_back("tile<i32>");
      if (!strides[d].known()) dynamic.push_back("tile<i32>");
    }
    std::string t =
        "tensor_view<" + join(shape_type, "x") + "x" + element(param) + ", strides=[" + join(stride_type, ",") + "]>";
    std::string n = fresh();
    line(n + " = make_tensor_view " + ptr + ", shape = [" + join(shape_text) + "], strides = [" + join(stride_text) +
         "] : " + (dynamic.empty() ? "" : join(dynamic) + " -> ") + t);
    return s_.tensor_views[key] = TensorView{n, t};
  }

  std::string partition_type(const Op& view, const TensorView& tv, const std::vector<int64_t>& tile) const {
    std::vector<std::string> t, dims;
    for (size_t d = 0; d < tile.size(); ++d) {
      t.push_back(std::to_string(tile[d]));
      dims.push_back(std::to_string(d));
    }
    return "partition_view<tile=(" + join(t, "x") +
           "), padding_value = " + std::string(to_string(view.get<ir::AttrKey::Pad>())) + ", " + tv.type +
           ", dim_map=[" + join(dims, ",") + "]>";
  }

  // A partition view of `view`'s tensor cut into tiles of `tile`, named `n`.
  void partition_view(const std::string& n, const Op& view, const std::vector<int64_t>& tile) {
    TensorView tv = tensor_view(param_of_.at(view.operand(ir::ops::Array::array)), view);
    line(n + " = make_partition_view " + tv.name + " : " + partition_type(view, tv, tile));
  }

  void view(const Op& op) {
    // The tensor view and pointer print before the partition view takes its number.
    TensorView tv = tensor_view(param_of_.at(op.operand(ir::ops::Array::array)), op);
    std::string n = fresh();
    s_.names[op.result] = n;
    line(n + " = make_partition_view " + tv.name + " : " + partition_type(op, tv, ints_attr(op, ir::AttrKey::Tile)));
  }

  std::string view_type(Value view) {
    const Op& v = *def_.at(view);
    TensorView tv = tensor_view(param_of_.at(v.operand(ir::ops::Array::array)), v);
    return partition_type(v, tv, ints_attr(v, ir::AttrKey::Tile));
  }

  // This block's cell of a view: the block id of each dimension's axis, cell 0 of a free one.
  std::vector<std::string> cell_of_block(const Op& view) {
    std::vector<std::string> idx;
    for (int64_t a : ints_attr(view, ir::AttrKey::Along))
      idx.push_back(a == free_axis ? int_constant(0) : block_id_of(int(a)));
    return idx;
  }

  // --- memory ---

  std::string next_token() { return s_.token = fresh(); }

  void load_view(const Op& op) {
    const Value view = op.operand(ir::ops::TileLoadAt::view);
    std::string v = name(view);
    std::vector<std::string> idx = op.kind == OpKind::TileLoadAt ? names(op.operands_from(ir::ops::TileLoadAt::cell))
                                                                 : cell_of_block(*def_.at(view));
    std::string in = s_.token;
    std::string n = fresh();
    s_.names[op.result] = n;
    line(n + ", " + next_token() + " = load_view_tko weak " + v + "[" + join(idx) + "] token=" + in + " : " +
         view_type(view) + ", tile<i32> -> " + type(op.type) + ", token");
  }

  void store_view(const Op& op) {
    using S = ir::ops::TileStoreSub;
    const Value stored = op.operand(S::tile);
    std::string t = name(stored);
    const Op& view = *def_.at(op.operand(S::view));
    std::string v;
    std::string vtype;
    std::vector<std::string> idx;
    if (op.kind == OpKind::TileStoreCell) {
      v = name(op.operand(S::view));
      vtype = view_type(op.operand(S::view));
      idx = cell_of_block(view);
    } else {
      // store_sub: the cell cut into parts of t's shape, through a view of that tile shape; part
      // `sub` of cell `c` is tile c * (cell / part) + sub of it.
      const ir::Type& part = k_.type_of(stored);
      std::vector<int64_t> tile(part.shape.begin(), part.shape.begin() + part.rank);
      std::vector<int64_t> cell = ints_attr(view, ir::AttrKey::Tile);
      std::vector<std::string> cells = cell_of_block(view);
      std::vector<std::string> sub = names(op.operands_from(S::part));
      for (size_t d = 0; d < tile.size(); ++d) {
        std::string ratio = int_constant(cell[d] / tile[d]);
        std::string m = fresh();
        line(m + " = muli " + cells[d] + ", " + ratio + " : tile<i32>");
        std::string a = fresh();
        line(a + " = addi " + m + ", " + sub[d] + " : tile<i32>");
        idx.push_back(a);
      }
      std::string key = "sub%" + std::to_string(op.operand(S::view)) + int_list(tile);
      TensorView tv = tensor_view(param_of_.at(view.operand(ir::ops::Array::array)), view);
      vtype = partition_type(view, tv, tile);
      if (auto it = s_.sub_views.find(key); it != s_.sub_views.end()) {
        v = it->second;
      } else {
        v = s_.sub_views[key] = fresh();
        partition_view(v, view, tile);
      }
    }
    std::string in = s_.token;
    line(next_token() + " = store_view_tko weak " + t + ", " + v + "[" + join(idx) + "] token=" + in + " : " +
         type_of(stored) + ", " + vtype + ", tile<i32> -> token");
  }

  // Element (i, j, ...) of the tile is at offset + i * strides[0] + j * strides[1] + ...;
  // row-major over the tile's shape when the op has no strides.
  static std::vector<int64_t> strides_of(const Op& op, const ir::Type& tile) {
    std::vector<int64_t> s = ints_attr(op, ir::AttrKey::Strides);
    if (!s.empty()) return s;
    s.assign(tile.rank, 1);
    for (int d = int(tile.rank) - 2; d >= 0; --d) s[size_t(d)] = s[size_t(d) + 1] * tile.shape[size_t(d) + 1];
    return s;
  }

  // `, extent = [%a, %b]`: the elements at coordinates below it take part (cuda_tile's ops take
  // the mask this implies; the text names the bounds).
  std::string extent_text(std::span<const Value> extent) {
    if (extent.empty()) return "";
    return ", extent = [" + join(names(extent)) + "]";
  }

  void load_ptr(const Op& op) {
    int param = param_of_.at(op.operand(ir::ops::TileLoad::array));
    std::string ptr = pointer(param);
    const Value offset = op.operand(ir::ops::TileLoad::offset);
    std::string at = name(offset);
    std::string bounds = extent_text(op.operands_from(ir::ops::TileLoad::extent));
    if (op.attr(ir::AttrKey::Pad)) {
      bounds += ", padding_value = " + std::string(to_string(op.get<ir::AttrKey::Pad>()));
    }
    std::string in = s_.token;
    std::string n = fresh();
    s_.names[op.result] = n;
    line(n + ", " + next_token() + " = load_ptr_tko weak " + ptr + "[" + at +
         "], strides = " + int_list(strides_of(op, op.type)) + bounds + " token=" + in + " : " + pointer_type(param) +
         ", " + type_of(offset) + " -> " + type(op.type) + ", token");
  }

  // cuda_tile's atomic_rmw mode: addf for floats, max/min or umax/umin by signedness.
  static std::string rmw_mode(OpKind k, ir::Scalar s) {
    std::string base = k == OpKind::TileAtomicAdd || k == OpKind::TileScatterAdd   ? "add"
                       : k == OpKind::TileAtomicMax || k == OpKind::TileScatterMax ? "max"
                                                                                   : "min";
    if (base == "add") return ir::is_float(s) ? "addf" : "add";
    return (ir::is_unsigned_int(s) ? "u" : "") + base;
  }

  // store and the atomics at an offset with strides. An atomic gives the old values, as cuda_tile's
  // atomic_rmw_tko does; kiln keeps none of them.
  void store_ptr(const Op& op) {
    using S = ir::ops::TileStore;
    int param = param_of_.at(op.operand(S::array));
    std::string ptr = pointer(param);
    const Value offset = op.operand(S::offset);
    std::string at = name(offset);
    std::string t = name(op.operand(S::tile));
    const ir::Type& tt = k_.type_of(op.operand(S::tile));
    std::string bounds = extent_text(op.operands_from(S::extent));
    std::string in = s_.token;
    std::string where = ptr + "[" + at + "], strides = " + int_list(strides_of(op, tt));
    std::string types = pointer_type(param) + ", " + type_of(offset) + ", " + type(tt);
    if (op.kind == OpKind::TileStore) {
      line(next_token() + " = store_ptr_tko weak " + t + ", " + where + bounds + " token=" + in + " : " + type(tt) +
           ", " + pointer_type(param) + ", " + type_of(offset) + " -> token");
      return;
    }
    std::string old = fresh();
    line(old + ", " + next_token() + " = atomic_rmw_tko relaxed device " + where + ", " + t + ", mode = " +
         rmw_mode(op.kind, tt.scalar) + bounds + " token=" + in + " : " + types + " -> " + type(tt) + ", token");
  }

  // "tile<128xptr<f32>>": a tile of pointers into parameter `param`.
  std::string pointer_tile_type(int param, const ir::Type& shape) const {
    std::string s = "tile<";
    for (int i = 0; i < shape.rank; ++i) s += std::to_string(shape.shape[size_t(i)]) + "x";
    return s + "ptr<" + element(param) + ">>";
  }

  // scatter and its atomics: the parameter's pointer widened to the values' shape and moved by the
  // offsets (cuda_tile's reshape, broadcast, offset), then one store or atomic_rmw through it.
  void scatter(const Op& op) {
    using S = ir::ops::TileScatter;
    int param = param_of_.at(op.operand(S::array));
    std::string ptr = pointer(param);
    const ir::Type& vt = k_.type_of(op.operand(S::values));
    std::string offsets = name(op.operand(S::offsets)), values = name(op.operand(S::values));
    std::string bounds = extent_text(op.operands_from(S::extent));
    ir::Type ones = ir::Type::tile(vt.scalar, vt.rank, {1, 1, 1, 1});
    std::string one = fresh();
    line(one + " = reshape " + ptr + " : " + pointer_type(param) + " -> " + pointer_tile_type(param, ones));
    std::string wide = fresh();
    line(wide + " = broadcast " + one + " : " + pointer_tile_type(param, ones) + " -> " + pointer_tile_type(param, vt));
    std::string ptrs = fresh();
    line(ptrs + " = offset " + wide + ", " + offsets + " : " + pointer_tile_type(param, vt) + ", " +
         type_of(op.operand(S::offsets)) + " -> " + pointer_tile_type(param, vt));
    std::string in = s_.token;
    if (op.kind == OpKind::TileScatter) {
      line(next_token() + " = store_ptr_tko weak " + values + ", " + ptrs + bounds + " token=" + in + " : " + type(vt) +
           ", " + pointer_tile_type(param, vt) + " -> token");
      return;
    }
    std::string old = fresh();
    line(old + ", " + next_token() + " = atomic_rmw_tko relaxed device " + ptrs + ", " + values +
         ", mode = " + rmw_mode(op.kind, vt.scalar) + bounds + " token=" + in + " : " + pointer_tile_type(param, vt) +
         ", " + type(vt) + " -> " + type(vt) + ", token");
  }

  // --- control flow ---

  struct Frame {
    OpKind kind;
    bool token;  // the construct carries the token
  };

  // The values a terminator passes on, and the token after them when its construct carries one.
  std::string passed(const Op& op, const Frame& f) {
    std::vector<std::string> vals = names(op.operands), types;
    for (Value v : op.operands) types.push_back(type_of(v));
    if (f.token) {
      vals.push_back(s_.token);
      types.push_back("token");
    }
    if (vals.empty()) return "";
    return " " + join(vals) + " : " + join(types);
  }

  void terminator(const Op& op) {
    if (frames_.empty()) unsupported(op, "it stands outside a loop or an if");
    const Frame& f = op.kind == OpKind::Yield ? frames_.back() : innermost_loop(op);
    std::string word = op.kind == OpKind::Break                             ? "break"
                       : (op.kind == OpKind::Yield && f.kind == OpKind::If) ? "yield"
                                                                            : "continue";
    line(word + passed(op, f));
  }

  const Frame& innermost_loop(const Op& op) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      if (it->kind == OpKind::For) return *it;
    }
    unsupported(op, "it stands outside a loop");
  }

  // Prints a region's ops inside braces already opened, and the terminator a region without one
  // of its own needs: a loop body continues, an if's region yields the token when the if carries
  // it. What the region printed is forgotten after it.
  void body(const ir::Region& r) {
    Scope saved = s_;
    ++depth_;
    region(r);
    bool terminated = !r.ops.empty() && r.ops.back().has(ir::kTerminator);
    const Frame& f = frames_.back();
    if (!terminated && f.kind == OpKind::For)
      line("continue" + std::string(f.token ? " " + s_.token + " : token" : ""));
    if (!terminated && f.kind == OpKind::If && f.token) line("yield " + s_.token + " : token");
    --depth_;
    s_ = saved;
  }

  void for_loop(const Op& op) {
    using F = ir::ops::For;
    std::string lo = name(op.operand(F::lower_bound)), hi = name(op.operand(F::upper_bound)),
                step = name(op.operand(F::step));
    std::span<const Value> inits = ir::loop_inits(op);
    std::vector<std::string> init_names = names(inits);
    bool token = touches_memory(op.regions[0]);
    std::vector<std::string> results, types;
    for (Value v : op.results()) {
      results.push_back(fresh());
      types.push_back(type_of(v));
    }
    if (token) {
      results.push_back(fresh());
      types.push_back("token");
      init_names.push_back(s_.token);
    }
    const ir::Region& r = op.regions[0];
    std::string iv = fresh();
    std::vector<std::string> iters;
    std::vector<std::string> carried;
    for (size_t i = 0; i < init_names.size(); ++i) {
      iters.push_back(fresh());
      carried.push_back(iters.back() + " = " + init_names[i]);
    }
    std::string head = (results.empty() ? "" : join(results) + " = ") + "for " + iv + " in (" + lo + " to " + hi +
                       ", step " + step + ") : " + type_of(op.operand(F::lower_bound));
    if (!carried.empty()) head += " iter_values(" + join(carried) + ") -> (" + join(types) + ")";
    line(head + " {");
    Scope outer = s_;
    s_.names[r.args[0]] = iv;
    std::span<const Value> args = ir::loop_carried_args(op);
    for (size_t i = 0; i < args.size(); ++i) s_.names[args[i]] = iters[i];
    if (token) s_.token = iters.back();
    frames_.push_back({OpKind::For, token});
    body(r);
    frames_.pop_back();
    s_ = outer;
    line("}");
    std::vector<Value> rs = op.results();
    for (size_t i = 0; i < rs.size(); ++i) s_.names[rs[i]] = results[i];
    if (token) s_.token = results.back();
  }

  void if_op(const Op& op) {
    std::string c = name(op.operand(ir::ops::If::condition));
    bool token = false;
    for (const ir::Region& r : op.regions) token = token || touches_memory(r);
    std::vector<std::string> results, types;
    for (Value v : op.results()) {
      results.push_back(fresh());
      types.push_back(type_of(v));
    }
    if (token) {
      results.push_back(fresh());
      types.push_back("token");
    }
    std::string head = (results.empty() ? "" : join(results) + " = ") + "if " + c;
    if (!types.empty()) head += " -> (" + join(types) + ")";
    line(head + " {");
    frames_.push_back({OpKind::If, token});
    for (size_t i = 0; i < op.regions.size(); ++i) {
      if (i == 1) {
        if (op.regions[1].ops.empty() && !token && results.empty()) break;
        line("} else {");
      }
      body(op.regions[i]);
    }
    frames_.pop_back();
    line("}");
    std::vector<Value> rs = op.results();
    for (size_t i = 0; i < rs.size(); ++i) s_.names[rs[i]] = results[i];
    if (token) s_.token = results.back();
  }

  const ir::Kernel& k_;
  std::unordered_map<Value, const Op*> def_;
  std::unordered_map<Value, int> param_of_;
  std::vector<Frame> frames_;
  Scope s_;
  std::string out_;
  int next_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string render(const Program& p) {
  // Vars become values that loops and ifs carry; the program keeps its own kernel.
  ir::Kernel k = p.kernel();
  passes::promote_vars(k);
  return Renderer(k).run();
}

}  // namespace kiln::tile
