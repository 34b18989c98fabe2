@launch(128)
kernel expi(X: tensor<i32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = exp(X[i :+ 128])
}
