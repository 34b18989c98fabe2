// phobosc: -D BM=64
@autotune(BM in [8, 32])
@launch(BM * 32)
kernel rows(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * BM
  Y[r :+ BM, :] = 2.0 * X[r :+ BM, :]
}
