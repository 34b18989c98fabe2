@launch(128)
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  var y = X[i :+ 128]
  y * 2.0
  Y[i :+ 128] = y
}
