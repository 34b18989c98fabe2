@launch(128)
kernel both(X: tensor<i32>[N], Y: tensor<i32>[N], Z: tensor<bool>[N]) {
  let i = ctx.block.x * 128
  Z[i :+ 128] = X[i :+ 128] && Y[i :+ 128]
}
