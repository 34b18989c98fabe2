@launch(128)
kernel row_sum(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  var acc: tile<f32>[16, 1] = 0.0
  acc = X[r :+ 16, :]
  Y[r :+ 16, :] = acc
}
