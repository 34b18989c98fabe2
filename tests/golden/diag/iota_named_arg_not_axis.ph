@launch(128)
kernel causal(S: tensor<f32>[M, 64]) {
  let r = ctx.block.x * 64
  let row = iota(64, 64, dim = 0)
  let col = iota(64, 64)
  S[r :+ 64, :] = where(col <= row, S[r :+ 64, :], -inf)
}
