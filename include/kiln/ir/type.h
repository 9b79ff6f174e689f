// IR types: scalars, vectors, and the memory and local types that ops address.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/ir/scalars.h"

namespace kiln::ir {

enum class TypeKind : uint8_t {
  None,    // ops without a result
  Scalar,  // a scalar value
  Vector,  // `width` lanes of a scalar
  Buffer,  // a global array with a run-time length (kernel parameter)
  Tensor,  // a global array with shape and strides of a compile-time rank (kernel parameter)
  Shared,  // a cube-shared array of fixed length
  Local,   // a unit-private array of fixed length
  Var,     // a mutable local holding one value
  Tile,    // a tile of the tile layer: a fixed shape of scalars in one memory space
};

enum class Access : uint8_t { ReadOnly, ReadWrite };

// Where a tile lives: in each unit's registers (a value the tile layer computes on), in the cube's
// shared memory (staged by copies, read by tensor-core ops), or in global memory (a view of a
// tensor). The tile layer's lowering and the tensor-core ops differ by space, so the type says it.
enum class MemorySpace : uint8_t { Registers, Shared, Global };
std::string_view to_string(MemorySpace m);
// Parses "registers", "shared", "global"; false when `text` names none.
bool parse_memory_space(std::string_view text, MemorySpace& out);

// A small value type; every field not used by `kind` stays at its default so that == works.
struct Type {
  TypeKind kind = TypeKind::None;
  Scalar scalar = Scalar::Bool;  // the element's scalar
  uint8_t width = 1;             // lanes of the element: 1, 2, 4, 8 or 16
  Access access = Access::ReadWrite;
  uint8_t rank = 0;                            // tensors and tiles
  uint32_t length = 0;                         // shared and local arrays
  std::array<uint32_t, 4> shape{};             // tiles
  MemorySpace space = MemorySpace::Registers;  // tiles
  bool holds_tile = false;                     // a var whose value is a tile: rank, shape and space are the tile's
  // Tiles and shared arrays: the kernel's layout (Kernel::layouts[layout - 1], kiln/ir/layout.h),
  // 0 while none is assigned.
  uint16_t layout = 0;

  static Type none() { return {}; }
  static Type scalar_of(Scalar s);
  // width 1 gives the scalar itself: a vector of one lane is not a separate type.
  static Type vector_of(Scalar s, int width);
  static Type value_of(Scalar s, int width) { return vector_of(s, width); }
  static Type buffer(Type element, Access access);
  static Type tensor(Type element, int rank, Access access);
  static Type shared(Type element, uint32_t length);
  static Type local(Type element, uint32_t length);
  static Type var(Type element);
  static Type tile(Scalar s, int rank, const std::array<uint32_t, 4>& shape,
                   MemorySpace space = MemorySpace::Registers);
  // The same tile (its layout too) with another element scalar (a tile's cast, compare, or the
  // lifted rules).
  Type tile_of(Scalar s) const {
    Type t = tile(s, rank, shape, space);
    t.layout = layout;
    return t;
  }
  Type with_layout(uint16_t l) const {
    Type t = *this;
    t.layout = l;
    return t;
  }

  bool is_none() const { return kind == TypeKind::None; }
  bool is_value() const { return kind == TypeKind::Scalar || kind == TypeKind::Vector; }
  bool is_tile() const { return kind == TypeKind::Tile; }
  bool is_register_tile() const { return is_tile() && space == MemorySpace::Registers; }
  // Elements of a tile of this shape (1 for rank 0).
  uint64_t tile_elements() const;
  bool is_scalar() const { return kind == TypeKind::Scalar; }
  bool is_vector() const { return kind == TypeKind::Vector; }
  bool is_global() const { return kind == TypeKind::Buffer || kind == TypeKind::Tensor; }
  bool is_array() const { return is_global() || kind == TypeKind::Shared || kind == TypeKind::Local; }
  bool is_bool() const { return is_value() && scalar == Scalar::Bool; }
  bool is_float() const { return is_value() && ir::is_float(scalar); }
  bool is_int() const { return is_value() && ir::is_int(scalar); }
  // The value type an array or var holds (for values, the type itself; for a var of a tile, the
  // tile).
  Type element() const;
  // Same lanes, another scalar: the type of a cast or of a comparison's result.
  Type with_scalar(Scalar s) const { return vector_of(s, width); }
  int element_bytes() const { return scalar_bytes(scalar) * width; }

  friend bool operator==(const Type&, const Type&) = default;
};

std::string to_string(const Type& t);

}  // namespace kiln::ir
