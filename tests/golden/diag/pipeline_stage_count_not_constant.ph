@launch(128)
@pipeline(stages)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N], stages: i32) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = X[i :+ 128]
}
