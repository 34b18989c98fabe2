@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.lane * 4
  Y[i :+ 4] = X[i :+ 4]
}
