@launch(128)
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N], big: bool) {
  let i = ctx.block.x * 128
  var s: f32
  if big {
    s = 2.0
  }
  Y[i :+ 128] = s * X[i :+ 128]
}
