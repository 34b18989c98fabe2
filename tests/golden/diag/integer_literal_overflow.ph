@launch(128)
kernel fill(Y: tensor<i64>[N]) {
  let i = ctx.block.x * 128
  var t: tile<i64>[128] = 18446744073709551616
  Y[i :+ 128] = t
}
