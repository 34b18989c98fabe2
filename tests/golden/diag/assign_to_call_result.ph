@launch(128)
kernel relu(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  tmax(Y[i :+ 128], 0.0) = X[i :+ 128]
}
