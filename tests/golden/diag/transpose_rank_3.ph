@launch(128)
kernel heads_t(X: tensor<f32>[S, H, 64], Y: tensor<f32>[H, S, 64]) {
  let s = ctx.block.x * 16
  let x = X[s :+ 16, 0 :+ 8, :]
  Y[0 :+ 8, s :+ 16, :] = transpose(x)
}
