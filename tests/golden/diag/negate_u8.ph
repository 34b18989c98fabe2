@launch(128)
kernel neg(X: tensor<u8>[N], Y: tensor<i32>[N]) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = -X[i :+ 128]
}
