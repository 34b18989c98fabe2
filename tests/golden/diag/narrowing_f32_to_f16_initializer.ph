@launch(128)
kernel to_half(X: tensor<f32>[N], Y: tensor<f16>[N]) {
  let i = ctx.block.x * 128
  var h: tile<f16>[128] = X[i :+ 128] * 0.5
  Y[i :+ 128] = h
}
