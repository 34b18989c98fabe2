// phobosc: -D N=1000
@launch(128)
@aligned(N = 64)
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 64
  Y[i :+ 64] = 2.0 * X[i :+ 64]
}
