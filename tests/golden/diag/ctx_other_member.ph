@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.foo.x * 128
  Y[i :+ 128] = X[i :+ 128]
}
