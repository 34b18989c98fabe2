// The GQA query tile on its own: Q [B, S, HQ, D] read as [BQ, NQ, D] tiles,
// the NQ query heads of one KV head (HKV = HQ / NQ), with NQ not always a
// power of two: the tile is [BQ, next_pow2(NQ), D] and the slack masked.
// Staged (a var), then written back scaled and summed over D. On sm_90a
// the staging is one tensor copy whose map views HQ as [HQ / NQ, NQ], so
// the slack lies past the end of that dim and arrives as zeros, and the
// scaled tile goes back by a tensor store through the same view, which
// clips the slack (spec/LANGUAGE.md 15.11); S not a multiple of BQ cuts
// the box.
@autotune(NQ in [7], D in [64], BQ in [16])
@dynshared
@grid(cdiv(S, BQ), HQ / NQ, B)
kernel qload(Q: tensor<f32>[B, S, HQ, D], O: tensor<f32>[B, S, HQ, D], R: tensor<f32>[B, S, HQ, 1]) {
  let s0 = ctx.block.x * BQ
  let h = ctx.block.y
  let b = ctx.block.z
  var q: tile<f32>[BQ, NQ, D] = Q[b, s0 :+ BQ, h * NQ :+ NQ, :]
  O[b, s0 :+ BQ, h * NQ :+ NQ, :] = q * 2.0 + 1.0
  R[b, s0 :+ BQ, h * NQ :+ NQ, :] = rowsum(q)
}

// The load on its own, for the Q-load benchmark: the staged tile, then
// only its first and last columns read back and written (1/D of the bytes
// read), so neither a row reduction's exchange nor the stores hide the load.
@autotune(NQ in [7], D in [64], BQ in [16])
@dynshared
@grid(cdiv(S, BQ), HQ / NQ, B)
kernel qload_edges(Q: tensor<f32>[B, S, HQ, D], R: tensor<f32>[B, S, HQ, 1]) {
  let s0 = ctx.block.x * BQ
  let h = ctx.block.y
  let b = ctx.block.z
  var q: tile<f32>[BQ, NQ, D] = Q[b, s0 :+ BQ, h * NQ :+ NQ, :]
  R[b, s0 :+ BQ, h * NQ :+ NQ, :] = q[:, :, 0 :+ 1] + q[:, :, D - 1 :+ 1]
}
