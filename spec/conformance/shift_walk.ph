// Shifted walks (spec 15.24, phobosc --shift-walks; the conformance harness
// plans them under PHOBOS_SHIFT_WALKS=1): where rows are not 16-byte aligned, a loop that
// walks a row in blocks starts at -sh (sh the row's misalignment in elements)
// and runs to hi = cdiv(N, 256) 256, so that every chunk is an aligned
// vector; the phantom columns before 0 and past hi must not reach a
// reduction. Each reduction here counts the slack it sees: the sum adds 1 a
// column (the columns in [N, hi) load as zero and add 1 each, as in the
// plain walk; a phantom would add one more), the max of x - 5 sees -5 there.
// W, f32 read at the loop's own block, lies at another alignment than X and
// Y. With an odd row pitch (N 1001, or PHOBOS_GPU_PAD=1) the rows start at
// every alignment.
@launch(64)
@grid(R)
kernel phantoms(X: tensor<bf16>[R, N], W: tensor<f32>[N], Y: tensor<bf16>[R, N], S: tensor<f32>[R, 3]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  var q: tile<f32>[1, 1] = -1000.0
  var m: tile<f32>[1, 1] = -inf
  var l: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 256) {
    let x = f32(X[r :+ 1, c0 :+ 256])
    s += rowsum(x + 1.0)
    q = tmax(q, rowmax(x - 5.0))
    let cols = c0 + iota(1, 256)
    let z = where(cols < N, x, -inf)
    let mnew = tmax(m, rowmax(z))
    l = l * exp(m - mnew) + rowsum(exp(z - mnew))
    m = mnew
  }
  S[r :+ 1, 0 :+ 1] = s
  S[r :+ 1, 1 :+ 1] = q
  S[r :+ 1, 2 :+ 1] = m + log(l)
  for c0 in range(0, N, 256) {
    Y[r :+ 1, c0 :+ 256] = bf16(exp(f32(X[r :+ 1, c0 :+ 256]) - m) / l * W[c0 :+ 256] + s * 0.001)
  }
}

// The same with W a row of a rank-2 tensor, W[0 :+ 1, c0 :+ 256]: a load at
// the walk's own block of wider elements (f32) than the leader's (bf16),
// whose row is one row: its first chunk of the first block starts sh f32
// columns before W's start, up to a granule before it, and must not take
// the vector path (nor the odd-pitch one) there (spec 15.24).
@launch(64)
@grid(R)
kernel phantoms_row(X: tensor<bf16>[R, N], W: tensor<f32>[1, N], Y: tensor<bf16>[R, N], S: tensor<f32>[R, 3]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  var q: tile<f32>[1, 1] = -1000.0
  var m: tile<f32>[1, 1] = -inf
  var l: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 256) {
    let x = f32(X[r :+ 1, c0 :+ 256])
    s += rowsum(x + 1.0)
    q = tmax(q, rowmax(x - 5.0))
    let cols = c0 + iota(1, 256)
    let z = where(cols < N, x, -inf)
    let mnew = tmax(m, rowmax(z))
    l = l * exp(m - mnew) + rowsum(exp(z - mnew))
    m = mnew
  }
  S[r :+ 1, 0 :+ 1] = s
  S[r :+ 1, 1 :+ 1] = q
  S[r :+ 1, 2 :+ 1] = m + log(l)
  for c0 in range(0, N, 256) {
    Y[r :+ 1, c0 :+ 256] = bf16(exp(f32(X[r :+ 1, c0 :+ 256]) - m) / l * W[0 :+ 1, c0 :+ 256] + s * 0.001)
  }
}

// Not shifted: an iota not added to c0 (each block's own positions) and a
// tile loaded before the loop meet each block's elements, not the row's
// columns, so this walk keeps its blocks at 0, 64, 128, ...
@launch(64)
@grid(R)
kernel block_positions(X: tensor<f32>[R, N], T: tensor<f32>[64], Y: tensor<f32>[R, N]) {
  let r = ctx.block.x
  let t = T[0 :+ 64]
  for c0 in range(0, N, 64) {
    Y[r :+ 1, c0 :+ 64] = X[r :+ 1, c0 :+ 64] * t + f32(iota(1, 64))
  }
}
