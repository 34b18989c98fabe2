// Row softmax, Y[r, :] = exp(X[r, :] - max) / sum, over rows of any length N.
//
// One CTA takes BR rows. A first pass walks the row in blocks of BN columns
// with a running max m and sum l (online softmax: when the max grows, the sum
// so far is rescaled by exp(m_old - m_new)); a second pass writes the
// normalized values. Columns past N load as zero, so the first pass masks
// them to -inf; the second pass's stores past N are skipped.
// The f32 and bf16 kernels are the same code; bf16 computes in f32.
// NT threads a CTA, a tuning point beside BR and BN (as a Triton author
// tunes num_warps): for rows of a vocabulary, one CTA a row of 512 or 1024
// threads keeps fewer rows in flight, so that the second pass finds more of
// its row in the L2.
@autotune(BR in [1, 8], BN in [1024, 16384], NT in [256, 1024])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel softmax_f32(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
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

@autotune(BR in [1, 8], BN in [1024, 16384], NT in [256, 1024])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel softmax_bf16(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N]) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = -inf
  var l: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let cols = c0 + iota(BR, BN)
    let x = where(cols < N, f32(X[r0 :+ BR, c0 :+ BN]), -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = bf16(exp(X[r0 :+ BR, c0 :+ BN] - m) / l)
  }
}
