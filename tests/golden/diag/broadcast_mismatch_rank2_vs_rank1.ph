@launch(128)
kernel add_bias(X: tensor<f32>[M, 64], B: tensor<f32>[32], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * 16
  let x = X[r :+ 16, :]
  let b = B[:]
  Y[r :+ 16, :] = x + b
}
