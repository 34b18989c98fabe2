// grid-stride: the block index reaches the store through the loop variable
kernel gs(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  for i in range(ctx.block.x * 4, N, ctx.grid.x * 4) {
    Y[i :+ 4] = X[i :+ 4]
  }
}
