// Loop accumulators whose row reductions stay within each thread, the row's
// threads meeting once after the loop (spec 15.15): a running sum or max, and
// the online logsumexp of softmax and cross-entropy. The variants spread a
// row over one warp's lanes (BR 4 at 64 threads), several warps (BR 1), or
// several rows a warp; each case is checked against the interpreter, which
// reduces every block in full.

// The online logsumexp of the first n columns of each row, from (m0, l0):
// n = 0 leaves (m0, l0); n = 65 leaves one column in the second block, so
// most threads see only -inf there.
@autotune(BR in [1, 4], NT in [64, 128])
@launch(NT)
@grid(cdiv(R, BR))
kernel lse_from(X: tensor<f32>[R, N], Out: tensor<f32>[R, 2], n: i32, m0: f32, l0: f32) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = m0
  var l: tile<f32>[BR, 1] = l0
  for c0 in range(0, n, 64) {
    let cols = c0 + iota(BR, 64)
    let x = where(cols < n, X[r0 :+ BR, c0 :+ 64], -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  Out[r0 :+ BR, 0 :+ 1] = m
  Out[r0 :+ BR, 1 :+ 1] = l
}

// Sums and a max from non-identity starts, f32 and i32, four accumulators
// of one loop (the columns past N load as zero: the max sees them, as the
// interpreter's does).
@autotune(BR in [1, 8], NT in [32, 128])
@launch(NT)
@grid(cdiv(R, BR))
kernel folds(X: tensor<f32>[R, N], I: tensor<i32>[R, N], Out: tensor<f32>[R, 3], Isum: tensor<i32>[R, 1]) {
  let r0 = ctx.block.x * BR
  var s: tile<f32>[BR, 1] = 1.5
  var q: tile<f32>[BR, 1] = 0.0
  var mx: tile<f32>[BR, 1] = -3.0
  var si: tile<i32>[BR, 1] = 7
  for c0 in range(0, N, 128) {
    let x = X[r0 :+ BR, c0 :+ 128]
    s += rowsum(x)
    q = q + rowsum(x * x)
    mx = tmax(rowmax(x), mx)
    si += rowsum(I[r0 :+ BR, c0 :+ 128])
  }
  Out[r0 :+ BR, 0 :+ 1] = s
  Out[r0 :+ BR, 1 :+ 1] = q
  Out[r0 :+ BR, 2 :+ 1] = mx
  Isum[r0 :+ BR, 0 :+ 1] = si
}

// A running sum read inside its loop (each block's prefix): not deferred,
// every block's rowsum meets its row.
@autotune(BR in [1, 4])
@launch(128)
@grid(cdiv(R, BR))
kernel prefix(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var s: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, 64) {
    let x = X[r0 :+ BR, c0 :+ 64]
    s += rowsum(x)
    Y[r0 :+ BR, c0 :+ 64] = x + s
  }
}

// An i8 running max over two blocks of 96 (a tile of 128 columns: slack in
// every block): narrower than 32 bits, not deferred (a thread's identity,
// the most negative i32, would round to 0 in an i8 register).
@autotune(NT in [32, 64])
@launch(NT)
@grid(R)
kernel i8max(X: tensor<i8>[R, N], MX: tensor<i8>[R, 1]) {
  let r0 = ctx.block.x
  var mx: tile<i8>[1, 1] = i8(-128)
  for c0 in range(0, N, 96) {
    mx = tmax(mx, rowmax(X[r0 :+ 1, c0 :+ 96]))
  }
  MX[r0 :+ 1, 0 :+ 1] = mx
}
