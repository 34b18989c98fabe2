@launch(128)
kernel widen(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  var x = X[i :+ 64]
  Y[i :+ 128] = x[ctx.block.y :+ 128]
}
