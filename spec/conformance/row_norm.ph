// Row kernels in the blocked layout (spec 15.6): each row scaled by the
// inverse root mean square of its elements and by a weight vector
// broadcast down the rows (the columns layout), over column blocks of BN
// with the running sum of squares in registers; bf16 in and out. The
// @autotune points give row layouts a warp per row, several rows a warp,
// and rows across all four warps (their partial sums meet in shared
// memory); rows and the last column block ragged.
@autotune(BR in [1, 2, 8], BN in [64, 256])
@launch(128)
@grid(cdiv(R, BR))
kernel row_norm(X: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {
  let r0 = ctx.block.x * BR
  var ss: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let x = f32(X[r0 :+ BR, c0 :+ BN])
    ss += rowsum(x * x)
  }
  let rs = 1.0 / sqrt(ss / f32(N) + 0.00001)
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = bf16(f32(X[r0 :+ BR, c0 :+ BN]) * rs * f32(W[c0 :+ BN]))
  }
}

// The same in f32 (4-byte elements: 4 to a 16-byte chunk), for rows whose
// pitch leaves them 4, 8 or 12 bytes off a 16-byte boundary.
@autotune(BR in [1, 8], BN in [128])
@launch(128)
@grid(cdiv(R, BR))
kernel row_norm_f32(X: tensor<f32>[R, N], W: tensor<f32>[N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var ss: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let x = X[r0 :+ BR, c0 :+ BN]
    ss += rowsum(x * x)
  }
  let rs = 1.0 / sqrt(ss / f32(N) + 0.00001)
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] * rs * W[c0 :+ BN]
  }
}
