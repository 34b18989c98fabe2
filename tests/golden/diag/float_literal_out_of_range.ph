@launch(128)
kernel row_max(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  var m: tile<f32>[16, 1] = -1e999
  m = tmax(m, rowmax(X[r :+ 16, :]))
  Y[r :+ 16, :] = m
}
