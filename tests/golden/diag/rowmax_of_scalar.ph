@launch(128)
kernel peak(X: tensor<f32>[M, 64], Y: tensor<f32>[M]) {
  let r = ctx.block.x
  let x = X[r, 0]
  Y[r] = rowmax(x)
}
