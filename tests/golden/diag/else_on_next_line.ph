@launch(128)
kernel relu_or_copy(X: tensor<f32>[N], Y: tensor<f32>[N], relu: bool) {
  let i = ctx.block.x * 128
  let x = X[i :+ 128]
  if relu {
    Y[i :+ 128] = tmax(x, 0.0)
  }
  else {
    Y[i :+ 128] = x
  }
}
