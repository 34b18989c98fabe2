@launch(128)
kernel scores(Q: tensor<f16>[M, 64], K: tensor<f16>[N, 128], S: tensor<f32>[M, N]) {
  let r = ctx.block.x * 64
  let q = Q[r :+ 64, :]
  let k = K[0 :+ 32, :]
  S[r :+ 64, 0 :+ 32] = dot_t(q, k)
}
