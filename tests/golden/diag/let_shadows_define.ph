// phobosc: -D BN=64
@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let BN = 32
  let i = ctx.block.x * BN
  Y[i :+ BN] = X[i :+ BN]
}
