@launch(128)
kernel halves(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  var x = X[i :+ 128]
  Y[i :+ 64] = x[96 :+ 64]
}
