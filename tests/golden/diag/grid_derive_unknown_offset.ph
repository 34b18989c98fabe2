kernel off(X: tensor<f32>[N], Y: tensor<f32>[N], o: i32) {
  Y[ctx.block.x * 4 + o :+ 4] = X[0 :+ 4]
}
