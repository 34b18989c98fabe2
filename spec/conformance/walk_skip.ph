// Walks whose last block leaves whole warps past the row (spec 15.25):
// rows of 2100 in blocks of 1024 over 256 threads, so that the last
// block's 52 columns lie in its first warp and the other seven warps skip
// the iteration where it would change nothing for them.
//
// lse_rows: the online logsumexp (its input -inf past the end: the fold's
// identity) and a pass that only stores; both loops are skipped.
@launch(256)
@grid(R)
kernel lse_rows(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N]) {
  let r = ctx.block.x
  var m: tile<f32>[1, 1] = -inf
  var l: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 1024) {
    let cols = c0 + iota(1, 1024)
    let x = where(cols < N, f32(X[r :+ 1, c0 :+ 1024]), -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  for c0 in range(0, N, 1024) {
    Y[r :+ 1, c0 :+ 1024] = bf16(exp(f32(X[r :+ 1, c0 :+ 1024]) - m) / l)
  }
}

// fills: the slack's values are not the folds' identities (1 for a sum,
// 0 for a max of values below it), so no warp may skip the first loop;
// the second's sum of 2 x (0 past the end) may be skipped.
@launch(256)
@grid(R)
kernel fills(X: tensor<f32>[R, N], S: tensor<f32>[R, 3]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  var q: tile<f32>[1, 1] = -inf
  for c0 in range(0, N, 1024) {
    let cols = c0 + iota(1, 1024)
    let x = X[r :+ 1, c0 :+ 1024]
    s += rowsum(where(cols < N, x, 1.0))
    q = tmax(q, rowmax(where(cols < N, x - 10.0, 0.0)))
  }
  var z: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 1024) {
    let cols = c0 + iota(1, 1024)
    z += rowsum(where(cols < N, X[r :+ 1, c0 :+ 1024], 0.0) * 2.0)
  }
  S[r :+ 1, 0 :+ 1] = s
  S[r :+ 1, 1 :+ 1] = q
  S[r :+ 1, 2 :+ 1] = z
}

// fills16: the slack's 0.5 is a bf16 constant (the where's type is X's),
// widened for the sum: not the sum's identity, so no warp may skip (a bf16
// constant's value is its fval; its ival, 0, once read as the identity).
@launch(256)
@grid(R)
kernel fills16(X: tensor<bf16>[R, N], S: tensor<f32>[R, 1]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 1024) {
    let cols = c0 + iota(1, 1024)
    s += rowsum(f32(where(cols < N, X[r :+ 1, c0 :+ 1024], 0.5)))
  }
  S[r :+ 1, 0 :+ 1] = s
}
