@launch(128)
kernel pick(X: tensor<f32>[M, 64], Z: tensor<f32>[M, 32], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * 16
  let x = X[r :+ 16, :]
  let z = Z[r :+ 16, :]
  Y[r :+ 16, :] = where(x > 0.0, x, z)
}
