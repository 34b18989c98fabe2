@launch(128)
kernel any_pos(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  var seen = false
  seen += X[i] > 0.0
  if seen {
    Y[i :+ 128] = X[i :+ 128]
  }
}
