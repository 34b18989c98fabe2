@launch(128)
kernel nonzero(X: tensor<f32>[N], M: tensor<bool>[N]) {
  let i = ctx.block.x * 128
  M[i :+ 128] = bool(X[i :+ 128])
}
