@launch(128)
kernel pow2(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = exp(X[i :+ 128], 2.0)
}
