// Multi-pass row kernels over column blocks of BN, each with a one-pass copy
// (spec 15.14): where N <= BN the loops run once, the copy's second pass reads
// the first pass's tile instead of loading it again, and the runtime launches
// the copy only for such N. The cases give N both at most BN (the copy runs
// beside the variant it came from) and past it (only the variant runs).

// Online softmax, the first pass masked past N by where/iota.
@autotune(BR in [1, 4], BN in [64, 256])
@launch(128)
@grid(cdiv(R, BR))
kernel softmax_rows(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = -inf
  var l: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let cols = c0 + iota(BR, BN)
    let x = where(cols < N, X[r0 :+ BR, c0 :+ BN], -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = exp(X[r0 :+ BR, c0 :+ BN] - m) / l
  }
}

// Residual add and RMS norm with the residual written back in place: the
// second pass reads Res (merged into the first pass's load), then stores it.
@autotune(BR in [1, 4], BN in [64, 256])
@launch(128)
@grid(cdiv(R, BR))
kernel rms_residual(X: tensor<bf16>[R, N], Res: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {
  let r0 = ctx.block.x * BR
  var ss: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let h = f32(X[r0 :+ BR, c0 :+ BN] + Res[r0 :+ BR, c0 :+ BN])
    ss += rowsum(h * h)
  }
  let rs = 1.0 / sqrt(ss / f32(N) + 0.00001)
  for c0 in range(0, N, BN) {
    let h = X[r0 :+ BR, c0 :+ BN] + Res[r0 :+ BR, c0 :+ BN]
    Res[r0 :+ BR, c0 :+ BN] = h
    Y[r0 :+ BR, c0 :+ BN] = bf16(f32(h) * rs * f32(W[c0 :+ BN]))
  }
}

// A store between two loads of the same tile: the second pass doubles X in
// place (its load merged into the first pass's), the third reads the doubled
// X (its load follows the store and must not reuse the first).
@autotune(BR in [2], BN in [32, 128])
@launch(64)
@grid(cdiv(R, BR))
kernel scale_twice(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var s: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    s += rowsum(X[r0 :+ BR, c0 :+ BN])
  }
  for c0 in range(0, N, BN) {
    X[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] * 2.0
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] + s
  }
}
