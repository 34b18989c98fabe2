@autotune(BN in [64, 128, 64])
@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * BN
  Y[i :+ BN] = X[i :+ BN]
}
