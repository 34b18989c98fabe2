// phobosc: -D D=96
@launch(128)
kernel qk(Q: tensor<f16>[S, D], K: tensor<f16>[T, 128], O: tensor<f32>[S, T]) {
  let r = ctx.block.x * 64
  let q = Q[r :+ 64, :]
  O[r :+ 64, 0 :+ 64] = dot_t(q, K[0 :+ 64, :])
}
