// for<unroll n> (Phobos's, spec 10.4): the body n times an iteration, the
// later copies under their own bound test. Row sums of X [R, N] over blocks
// of 32 columns, unrolled 3 times, where N / 32 is not a multiple of 3.
@autotune(BR in [4])
@grid(cdiv(R, BR))
kernel unrolled(X: tensor<f32>[R, N], SM: tensor<f32>[R, 1]) {
  let r0 = ctx.block.x * BR
  var acc: tile<f32>[BR, 1] = 0.0
  for<unroll 3> c0 in range(0, N, 32) {
    let x = X[r0 :+ BR, c0 :+ 32]
    acc += rowsum(x)
  }
  SM[r0 :+ BR, :] = acc
}
