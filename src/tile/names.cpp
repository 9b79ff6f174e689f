#include "names.h"

namespace kiln::tile {

std::string tile_text(const ir::Type& t) {
  std::string s = "tile<";
  for (int i = 0; i < t.rank; ++i) s += std::to_string(t.shape[size_t(i)]) + "x";
  // cuda_tile's bool is i1.
  return s + (t.scalar == ir::Scalar::Bool ? std::string("i1") : std::string(ir::scalar_name(t.scalar))) + ">";
}

std::string cuda_tile_name(ir::OpKind k, ir::Scalar s, ir::Scalar to) {
  using K = ir::OpKind;
  bool f = ir::is_float(s);
  auto fi = [&](const char* base) { return std::string(base) + (f ? "f" : "i"); };
  switch (k) {
    case K::Add: return fi("add");
    case K::Sub: return fi("sub");
    case K::Mul: return fi("mul");
    case K::Div: return fi("div");
    case K::Rem: return fi("rem");
    case K::Neg: return fi("neg");
    case K::Abs: return fi("abs");
    case K::Min: return fi("min");
    case K::Max: return fi("max");
    case K::Fma: return "fma";
    case K::Eq:
    case K::Ne:
    case K::Lt:
    case K::Le:
    case K::Gt:
    case K::Ge: return fi("cmp");
    case K::Select: return "select";
    case K::And: return "andi";
    case K::Or: return "ori";
    case K::Xor: return "xori";
    case K::Cast:
      // Between integers cuda_tile widens (exti) or narrows (trunci); otherwise ftof, ftoi, itof.
      if (!f && !ir::is_float(to)) return ir::scalar_bytes(to) > ir::scalar_bytes(s) ? "exti" : "trunci";
      return std::string(f ? "f" : "i") + "to" + (ir::is_float(to) ? "f" : "i");
    case K::TileView: return "make_partition_view";
    case K::TileLoadCell: return "load_cell";
    case K::TileLoadAt: return "load_at";
    case K::TileStoreCell: return "store_cell";
    case K::TileStoreSub: return "store_sub";
    case K::TileLoad: return "load";
    case K::TileStore: return "store";
    // The scatter forms' atomics are called as the offset forms are: atomic_add(p, offsets, values).
    case K::TileAtomicAdd:
    case K::TileScatterAdd: return "atomic_add";
    case K::TileAtomicMax:
    case K::TileScatterMax: return "atomic_max";
    case K::TileAtomicMin:
    case K::TileScatterMin: return "atomic_min";
    case K::TileScatter: return "scatter";
    case K::TileFull: return "constant";
    case K::TileBroadcast: return "broadcast";
    case K::TileReduceSum:
    case K::TileReduceMax:
    case K::TileReduceMin: return "reduce";
    case K::TileTranspose: return "permute";
    case K::TileMma: return f ? "mmaf" : "mmai";
    case K::TileBlockId: return "get_tile_block_id";
    default: return std::string(ir::op_name(k));  // exp, log, sqrt, tanh, ...: the same words
  }
}

}  // namespace kiln::tile
