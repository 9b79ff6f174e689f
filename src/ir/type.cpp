// Scalar facts and type construction.
#include "kiln/ir/type.h"

#include <cassert>
#include <iterator>
#include <stdexcept>

#include "kiln/error.h"
#include "kiln/ir/target.h"

namespace kiln::ir {

bool parse_scalar(std::string_view text, Scalar& out) {
  for (size_t i = 0; i < std::size(kScalarFacts); ++i) {
    if (kScalarFacts[i].name == text) {
      out = static_cast<Scalar>(i);
      return true;
    }
  }
  return false;
}

Type Type::scalar_of(Scalar s) {
  Type t;
  t.kind = TypeKind::Scalar;
  t.scalar = s;
  return t;
}

Type Type::vector_of(Scalar s, int width) {
  if (!Target::valid_vector_width(width)) {
    throw Error("ir.bad_type",
                "vector width " + std::to_string(width) + " is not one of " + Target::vector_widths_text());
  }
  Type t = scalar_of(s);
  if (width > 1) {
    t.kind = TypeKind::Vector;
    t.width = static_cast<uint8_t>(width);
  }
  return t;
}

static Type array_of(TypeKind kind, Type element) {
  Type t;
  t.kind = kind;
  t.scalar = element.scalar;
  t.width = element.width;
  return t;
}

Type Type::buffer(Type element, Access access) {
  Type t = array_of(TypeKind::Buffer, element);
  t.access = access;
  return t;
}

Type Type::tensor(Type element, int rank, Access access) {
  Type t = array_of(TypeKind::Tensor, element);
  t.access = access;
  t.rank = static_cast<uint8_t>(rank);
  return t;
}

Type Type::shared(Type element, uint32_t length) {
  Type t = array_of(TypeKind::Shared, element);
  t.length = length;
  return t;
}

Type Type::local(Type element, uint32_t length) {
  Type t = array_of(TypeKind::Local, element);
  t.length = length;
  return t;
}

Type Type::var(Type element) {
  Type t = array_of(TypeKind::Var, element);
  if (element.is_tile()) {
    t.holds_tile = true;
    t.rank = element.rank;
    t.shape = element.shape;
    t.space = element.space;
    t.layout = element.layout;
  }
  return t;
}

Type Type::element() const {
  if (kind == TypeKind::Var && holds_tile) return tile(scalar, rank, shape, space).with_layout(layout);
  return vector_of(scalar, width);
}

uint64_t Type::tile_elements() const {
  uint64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= shape[static_cast<size_t>(i)];
  return n;
}

Type Type::tile(Scalar s, int rank, const std::array<uint32_t, 4>& shape, MemorySpace space) {
  Type t;
  t.kind = TypeKind::Tile;
  t.scalar = s;
  t.rank = static_cast<uint8_t>(rank);
  t.shape = shape;
  t.space = space;
  return t;
}

namespace {
constexpr std::string_view kSpaces[] = {"registers", "shared", "global"};
}  // namespace

std::string_view to_string(MemorySpace m) { return kSpaces[static_cast<size_t>(m)]; }

bool parse_memory_space(std::string_view text, MemorySpace& out) {
  for (size_t i = 0; i < std::size(kSpaces); ++i) {
    if (kSpaces[i] == text) {
      out = static_cast<MemorySpace>(i);
      return true;
    }
  }
  return false;
}

static std::string element_text(const Type& t) {
  std::string s(scalar_name(t.scalar));
  if (t.width > 1) return "vector<" + std::to_string(t.width) + " x " + s + ">";
  return s;
}

std::string to_string(const Type& t) {
  switch (t.kind) {
    case TypeKind::None: return "none";
    case TypeKind::Scalar:
    case TypeKind::Vector: return element_text(t);
    case TypeKind::Buffer: return "buffer<" + element_text(t) + (t.access == Access::ReadOnly ? ", ro>" : ", rw>");
    case TypeKind::Tensor:
      return "tensor<" + element_text(t) + ", " + std::to_string(t.rank) +
             (t.access == Access::ReadOnly ? ", ro>" : ", rw>");
    case TypeKind::Shared:
      return "shared<" + element_text(t) + ", " + std::to_string(t.length) +
             (t.layout ? ", #" + std::to_string(t.layout) : std::string()) + ">";
    case TypeKind::Local: return "local<" + element_text(t) + ", " + std::to_string(t.length) + ">";
    case TypeKind::Var: return "var<" + (t.holds_tile ? to_string(t.element()) : element_text(t)) + ">";
    case TypeKind::Tile: {
      std::string s = "tile<[";
      for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
      return s + "] x " + std::string(scalar_name(t.scalar)) + ", " + std::string(to_string(t.space)) +
             (t.layout ? ", #" + std::to_string(t.layout) : std::string()) + ">";
    }
  }
  return "?";
}

}  // namespace kiln::ir
