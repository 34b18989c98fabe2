@launch(128)
@grid(cdiv(n, 128))
kernel head(X: tensor<f32>[N], Y: tensor<f32>[N], n: i32) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = X[i :+ 128]
}
