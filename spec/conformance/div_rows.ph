// Division by a row value broadcast over the row (spec 15.12): one
// reciprocal a row and two fmas an element where the operands allow, div.rn
// behind a branch where they do not; either way each quotient is x / l
// rounded to nearest, which the cases check bit for bit (tolerance 0). D's
// row maximum is the divisor (a max is exact in any order, so the reference
// has the same l); X takes every kind of f32 in one case, normal values in
// the others, and D places l inside the fast range and below and above it;
// div_scalar and div_cols divide by a scalar and by a row vector.
@autotune(BR in [1, 4], BN in [64, 256])
@launch(128)
@grid(cdiv(R, BR))
kernel div_rows(X: tensor<f32>[R, N], D: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var l: tile<f32>[BR, 1] = -inf
  for c0 in range(0, N, BN) {
    let cols = c0 + iota(BR, BN)
    l = tmax(l, rowmax(where(cols < N, D[r0 :+ BR, c0 :+ BN], -inf)))
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] / l
  }
}

// The same by a scalar: one reciprocal for the whole tile.
@autotune(BR in [1, 4], BN in [64, 256])
@launch(128)
@grid(cdiv(R, BR))
kernel div_scalar(X: tensor<f32>[R, N], s: f32, Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] / s
  }
}

// And by a row vector broadcast down the rows (its reciprocals serve every
// row repetition of a thread).
@autotune(BR in [4, 16], BN in [64, 256])
@launch(128)
@grid(cdiv(R, BR))
kernel div_cols(X: tensor<f32>[R, N], W: tensor<f32>[N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] / W[c0 :+ BN]
  }
}
