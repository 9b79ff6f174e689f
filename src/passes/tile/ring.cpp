// The ring kinds of ring.h.
#include "passes/tile/ring.h"

namespace kiln::passes::tile {

namespace {

class AsyncCopyRing final : public RingKind {
 public:
  std::string_view name() const override { return "cp.async"; }
  bool async() const override { return true; }
  void commit(ir::Builder& b) const override { b.emit(ir::OpKind::CopyAsyncCommit, {}); }
  void wait(ir::Builder& b, int64_t pending) const override {
    b.emit(ir::OpKind::CopyAsyncWait, {}, ir::Type::none(), {{ir::AttrKey::Pending, ir::AttrValue::of_int(pending)}});
  }
};

class PlainRing final : public RingKind {
 public:
  std::string_view name() const override { return "loads and stores"; }
  bool async() const override { return false; }
  void commit(ir::Builder&) const override {}
  void wait(ir::Builder&, int64_t) const override {}
};

}  // namespace

const RingKind& ring_kind_for(const ir::Target& target) {
  static const AsyncCopyRing async_ring;
  static const PlainRing plain_ring;
  if (target.cuda_at_least(80)) return async_ring;
  return plain_ring;
}

}  // namespace kiln::passes::tile
