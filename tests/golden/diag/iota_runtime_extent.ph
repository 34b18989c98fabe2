@launch(128)
kernel positions(Y: tensor<i32>[N], n: i32) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = i + iota(n)
}
