@autotune(BM in [16, 128], BK in [32, 64])
@launch(BM * 16)
kernel mm(A: tensor<f16>[M, K], B: tensor<f16>[K, 64], C: tensor<f32>[M, 64]) {
  let r = ctx.block.x * BM
  var acc: tile<f32>[BM, 64] = 0.0
  for k in range(0, K, BK) {
    acc += dot(A[r :+ BM, k :+ BK], B[k :+ BK, :])
  }
  C[r :+ BM, :] = acc
}
