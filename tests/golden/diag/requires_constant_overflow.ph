@grid(cdiv(N, 64))
@requires(N >= N + 4611686018427387904 * 4)
kernel k(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i0 = ctx.block.x * 64
  Y[i0 :+ 64] = X[i0 :+ 64]
}
