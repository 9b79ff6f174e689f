// Tile programs that the gallery (kiln dump, kiln demo) and the benchmarks share: a pipelined bf16
// matmul and seed 04's flash attention forward, in its own form and in FlashAttention-2's.
#pragma once

#include <cstdint>

#include "kiln/tile.h"

namespace kiln::gallery {

// c = a x b for n x n matrices, bf16 in and out, f32 accumulation: bm x bn blocks walking K by
// bk, the factors pipelined `stages` deep.
struct MatmulBlocks {
  int64_t bm, bn, bk, stages;
};
tile::Traced tile_matmul_bf16(int64_t n, MatmulBlocks b);

// Flash attention forward, bf16 in and out, f32 accumulation: softmax(q k^T / sqrt(dim)) v, a
// block of queries over blocks of keys, each head `seq` rows of the flattened [heads * seq, dim]
// tensors. exp2_form: FlashAttention-2's form of the softmax, exp2 with the scale folded into
// log2(e) (one fused multiply-add an element) on the hardware's approximations
// (tile::Options::fast_math), as FlashAttention and Triton compute it.
// block_q queries a block (its cube), over block_k keys a step.
struct AttentionForm {
  bool exp2 = false;
  int64_t block_q = 64, block_k = 64;
};
tile::Traced tile_flash_attention(int64_t heads, int64_t seq, int64_t dim, AttentionForm form = {});

}  // namespace kiln::gallery
