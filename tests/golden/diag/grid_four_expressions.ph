@launch(128)
@grid(cdiv(S, 64), H, B, 2)
kernel copy4(X: tensor<f32>[B, H, S, 64], Y: tensor<f32>[B, H, S, 64]) {
  let s = ctx.block.x * 64
  Y[ctx.block.z, ctx.block.y, s :+ 64, :] = X[ctx.block.z, ctx.block.y, s :+ 64, :]
}
