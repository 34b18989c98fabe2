// a var assigned from the block index late in a loop
kernel v(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  var o = 0
  for i in range(0, 4) {
    Y[o :+ 4] = X[0 :+ 4]
    o = ctx.block.x * 4
  }
}
