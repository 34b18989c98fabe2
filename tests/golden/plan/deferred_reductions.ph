// phobosc: -D BR=1 -D BN=256
// Loop accumulators (spec 15.15): the softmax's online logsumexp and a
// LayerNorm's two sums stay within each thread in their loops, met once at
// the exit (one exchange, 64 bytes: 8 warps of a row, 8 bytes each); a sum
// read inside its loop meets every iteration.
@launch(256)
@grid(cdiv(R, BR))
kernel softmax(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
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

@launch(256)
@grid(cdiv(R, BR))
kernel moments(X: tensor<bf16>[R, N], S: tensor<f32>[R, 2]) {
  let r0 = ctx.block.x * BR
  var s1: tile<f32>[BR, 1] = 0.0
  var s2: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let x = f32(X[r0 :+ BR, c0 :+ BN])
    s1 += rowsum(x)
    s2 += rowsum(x * x)
  }
  S[r0 :+ BR, 0 :+ 1] = s1
  S[r0 :+ BR, 1 :+ 1] = s2
}

@launch(256)
@grid(cdiv(R, BR))
kernel prefix(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var s: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let x = X[r0 :+ BR, c0 :+ BN]
    s += rowsum(x)
    Y[r0 :+ BR, c0 :+ BN] = x + s
  }
}
