@launch(128)
kernel prefix(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x
  Y[0 :+ 128] = X[i : i * 2]
}
