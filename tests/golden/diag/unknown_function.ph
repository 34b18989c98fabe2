@launch(128)
kernel act(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * 16
  let x = X[r :+ 16, :]
  Y[r :+ 16, :] = softplus(x)
}
