@launch(128)
kernel scale_in_place(n: i32, X: tensor<f32>[n]) {
  let i = ctx.block.x * 128
  X[i :+ 128] = 2.0 * X[i :+ 128]
}
