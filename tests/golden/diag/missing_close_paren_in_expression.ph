@launch(128)
kernel softplus(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  let x = X[i :+ 128]
  let y = log(1.0 + exp(x)
  Y[i :+ 128] = y
}
