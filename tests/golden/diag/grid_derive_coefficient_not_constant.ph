kernel c(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let chunk = cdiv(N, 8)
  Y[ctx.block.x * chunk :+ 4] = X[0 :+ 4]
}
