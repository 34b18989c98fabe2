@autotune(BM in [16, 64], BN in [64, 128])
@autotune(BM in [32])
@launch(128)
kernel copy2d(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let r = ctx.block.x * BM
  let c = ctx.block.y * BN
  Y[r :+ BM, c :+ BN] = X[r :+ BM, c :+ BN]
}
