@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  Y[ctx.block.x * 128 :+ 128] = X[ctx.block.x * 128 :+ 128]
}

@launch(128)
kernel copy(X: tensor<f16>[N], Y: tensor<f16>[N]) {
  Y[ctx.block.x * 128 :+ 128] = X[ctx.block.x * 128 :+ 128]
}
