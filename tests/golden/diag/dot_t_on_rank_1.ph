@launch(128)
kernel qk(Q: tensor<f16>[M, 64], K: tensor<f16>[64], S: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  S[r :+ 16, :] = dot_t(Q[r :+ 16, :], K[:])
}
