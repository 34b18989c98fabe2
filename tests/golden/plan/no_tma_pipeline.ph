// phobosc:
// @no_tma keeps this kernel on the threads' own loads though TMA copies are the default, and
// @pipeline: the plan's path says why, and no ring or tensor map appears.
@pipeline
@no_tma
@grid(cdiv(M, 16))
kernel rows(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64]) {
  let r0 = ctx.block.x * 16
  var acc: tile<f32>[16, 64] = 0.0
  for k in range(0, 4) {
    acc += X[r0 :+ 16, 0 :+ 64] * 2.0
  }
  var t: tile<f32>[16, 64] = X[r0 :+ 16, 0 :+ 64]
  Y[r0 :+ 16, 0 :+ 64] = acc + t
}
