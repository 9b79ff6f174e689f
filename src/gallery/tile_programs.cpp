// The tile programs of tile_programs.h.
#include "gallery/tile_programs.h"

#include <cmath>
#include <string>

namespace kiln::gallery {

using namespace kiln::tile;

Traced tile_matmul_bf16(int64_t n, MatmulBlocks s) {
  return trace("tile_matmul_bf16", In<bf16>(cells({n, n}, {s.bm, s.bk}).along({0, free_axis})),
               In<bf16>(cells({n, n}, {s.bk, s.bn}).along({free_axis, 1})), Out<bf16>(cells({n, n}, {s.bm, s.bn})),
               [n, s](Param<bf16> a, Param<bf16> b, Param<bf16> c) {
                 tile::Var<float> acc = zeros<float>({uint32_t(s.bm), uint32_t(s.bn)});
                 For(d_range(0, int32_t(n / s.bk)).prefetch_stages(s.stages),
                     [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc); });
                 store_cell(c, acc.get().to<bf16>());
               });
}

Traced tile_flash_attention(int64_t heads, int64_t seq, int64_t dim, AttentionForm form) {
  const uint32_t d = uint32_t(dim), bq = uint32_t(form.block_q), bk = uint32_t(form.block_k);
  const bool exp2_form = form.exp2;
  Cells rows = cells({heads * seq, dim}, {form.block_q, dim});
  Cells keys = cells({heads * seq, dim}, {form.block_k, dim}).along({free_axis, 1});
  Options options;
  if (exp2_form) options.fast_math = {.contract = true, .approx = true};
  return trace(exp2_form ? "tile_flash_attention_exp2_bf16" : "tile_flash_attention_bf16", options, In<bf16>(rows),
               In<bf16>(keys), In<bf16>(keys), Out<bf16>(rows),
               [seq, d, bq, bk, exp2_form](Param<bf16> q, Param<bf16> k, Param<bf16> v, Param<bf16> out) {
                 const double scale = 1.0 / std::sqrt(double(d)), scale_log2e = scale / std::log(2.0);
                 // The head's first key block: this block's queries are rows of one head.
                 const int32_t q_blocks = int32_t(seq / bq), k_blocks = int32_t(seq / bk);
                 Index first = block_id(0) / q_blocks * k_blocks;
                 Tile<bf16> qt = load_cell(q);
                 tile::Var<float> m = full<float>({bq, 1}, -INFINITY);
                 tile::Var<float> l = full<float>({bq, 1}, 0.0);
                 tile::Var<float> acc = full<float>({bq, d}, 0.0);
                 For(d_range(0, k_blocks).prefetch_stages(2), [&](Index j) {
                   Tile<float> qk = mma(qt, load_at(k, {first + j, Index(0)}).transpose(), zeros<float>({bq, bk}));
                   // The exp2 form keeps s (and m) in units of q k^T, the scale folded into the exponent.
                   Tile<float> s = exp2_form ? qk : qk * scale;
                   Tile<float> m_new = max(m.get(), reduce_max(s, {.keepdims = true}));
                   Tile<float> p = exp2_form ? exp2(s * scale_log2e - m_new * scale_log2e) : exp(s - m_new);
                   Tile<float> alpha = exp2_form ? exp2((m.get() - m_new) * scale_log2e) : exp(m.get() - m_new);
                   l = l.get() * alpha + reduce_sum(p, {.keepdims = true});
                   acc = mma(p.to<bf16>(), load_at(v, {first + j, Index(0)}), acc.get() * alpha);
                   m = m_new;
                 });
                 store_cell(out, (acc.get() / l.get()).to<bf16>());
               });
}

}  // namespace kiln::gallery
