// Loops whose last block leaves whole warps past the row's end (spec 15.12):
// rows of 1100 and 2100 in blocks of 1024 over 256 threads, so the last
// block's columns lie in its first warp and the other seven hold none. In
// a loop such a thread takes one branch past its element-by-element path:
// a load's elements are zero there (the sum reads them unmasked), a store
// writes nothing. With rows padded by one element (PHOBOS_GPU_PAD=1: an
// odd pitch) every block but the last takes the misaligned-rows path.
@launch(256)
@grid(R)
kernel past_end(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N], S: tensor<f32>[R, 1]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 1024) {
    s += rowsum(f32(X[r :+ 1, c0 :+ 1024]))
  }
  S[r :+ 1, 0 :+ 1] = s
  for c0 in range(0, N, 1024) {
    Y[r :+ 1, c0 :+ 1024] = bf16(f32(X[r :+ 1, c0 :+ 1024]) * 0.5 - s)
  }
}
