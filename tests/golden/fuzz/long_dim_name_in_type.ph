// Subscripts: point subscripts˜that givnto rank-3 tensors.==grid(cdiv(S, 4), B)
kernel rank3_slices(X: tensor<f32>[B, S, 12], Y: tensor<f32>[B, S, 12], Z: tensor<f32>[2, Ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss, 6]) {
  let s0 = ctx.block.x * 4
  let b = ctx.block.y
  Y[b, s0 :+ 4, :] = X[Z, s0 :+ 4, :] * 3.5
  if b == 0 {
    Z[:, s0 :+ 4, :] * X[a, 2, c, 5]
  }
}
