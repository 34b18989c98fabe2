// int8 GEMM with per-row and per-column scales (W8A8):
//   C[m, n] = f32(sum_k A[m, k] * B[n, k]) * SA[m] * SB[n]
// A [M, K] i8 (activations, one scale a row), B [N, K] i8 (weights stored
// [N, K], one scale an output column), C [M, N] f32. dot_t contracts B's
// last dim; the i8 x i8 products accumulate exactly in i32.
@autotune(BM in [64, 128], BN in [64, 128], BK in [64, 128])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gemm_i8(A: tensor<i8>[M, K], B: tensor<i8>[N, K], SA: tensor<f32>[M, 1],
               SB: tensor<f32>[1, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  var acc: tile<i32>[BM, BN] = 0
  for k0 in range(0, K, BK) {
    acc += dot_t(A[m0 :+ BM, k0 :+ BK], B[n0 :+ BN, k0 :+ BK])
  }
  C[m0 :+ BM, n0 :+ BN] = f32(acc) * SA[m0 :+ BM, :] * SB[:, n0 :+ BN]
}
