@launch(128)
kernel count_pos(X: tensor<f32>[N], Y: tensor<i32>[N]) {
  let i = ctx.block.x * 128
  let pos = X[i :+ 128] > 0.0
  Y[i :+ 128] = pos + pos
}
