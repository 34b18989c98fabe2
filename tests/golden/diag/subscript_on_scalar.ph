@launch(128)
kernel scale(X: tensor<bf16>[N], Y: tensor<bf16>[N], w: bf16) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = w[0] * X[i :+ 128]
}
