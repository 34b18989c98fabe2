@launch(128)
kernel axpy(X: tensor<f32>[M, 64], Z: tensor<f32>[M, 32], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * 16
  Y[r :+ 16, :] = fma(X[r :+ 16, :], 2.0, Z[r :+ 16, :])
}
