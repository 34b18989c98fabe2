// Tile accumulators that only reductions after their loop read (spec
// 15.23): each becomes a row accumulator that adds (or maxes in) the
// reduction of each update. s starts at 1.0, not the identity: its row
// value starts at rowsum of the start, 16. k is also stored whole after
// the loop, so it stays a tile. Rows of N columns in blocks of 16 (N need
// not be a multiple), rows past R masked.
@launch(64)
@grid(cdiv(R, 2))
kernel tile_accs(X: tensor<f32>[R, N], I: tensor<i32>[R, N], SM: tensor<f32>[R, 1], MX: tensor<f32>[R, 1],
                 SI: tensor<i32>[R, 1], S1: tensor<f32>[R, 1], KEPT: tensor<f32>[R, 16]) {
  let r0 = ctx.block.x * 2
  var s: tile<f32>[2, 16] = 1.0
  var m: tile<f32>[2, 16] = -inf
  var si: tile<i32>[2, 16] = 0
  var k: tile<f32>[2, 16] = 0.0
  for c0 in range(0, N, 16) {
    let cols = c0 + iota(2, 16)
    let x = X[r0 :+ 2, c0 :+ 16]
    s += x
    m = tmax(where(cols < N, x, -inf), m)
    si = I[r0 :+ 2, c0 :+ 16] + si
    k += x
  }
  SM[r0 :+ 2, 0 :+ 1] = rowsum(s)
  MX[r0 :+ 2, 0 :+ 1] = rowmax(m)
  SI[r0 :+ 2, 0 :+ 1] = rowsum(si)
  S1[r0 :+ 2, 0 :+ 1] = rowsum(k)
  KEPT[r0 :+ 2, 0 :+ 16] = k
}

// The Triton tutorial's layer-norm statistics: rank-1 accumulators of one
// row a CTA, read by the row's mean and variance.
@autotune(BS in [16, 64])
@launch(32)
@grid(R)
kernel row_stats(X: tensor<f32>[R, N], MEAN: tensor<f32>[R], VAR: tensor<f32>[R]) {
  let row = ctx.block.x
  var acc: tile<f32>[BS] = 0.0
  for off in range(0, N, BS) {
    acc += X[row, off :+ BS]
  }
  let mean = rowsum(acc) / f32(N)
  var acc2: tile<f32>[BS] = 0.0
  for off in range(0, N, BS) {
    let cols = off + iota(BS)
    let d = where(cols < N, X[row, off :+ BS] - mean, 0.0)
    acc2 += d * d
  }
  MEAN[row :+ 1] = mean
  VAR[row :+ 1] = rowsum(acc2) / f32(N)
}

// Accumulators updated one after another in straight code (spec 15.23), as
// a one-pass copy's unrolled loops leave them: a sum from 1.0 (its row
// value starts at 16) over three blocks, either operand order, and a max of
// two of them, each reduced after its last update.
@launch(32)
@grid(R)
kernel straight_accs(X: tensor<f32>[R, 48], S: tensor<f32>[R], M: tensor<f32>[R]) {
  let row = ctx.block.x
  var s: tile<f32>[16] = 1.0
  s += X[row, 0 :+ 16]
  s = X[row, 16 :+ 16] + s
  s += X[row, 32 :+ 16]
  var m: tile<f32>[16] = -inf
  m = tmax(m, X[row, 0 :+ 16])
  m = tmax(X[row, 32 :+ 16], m)
  S[row :+ 1] = rowsum(s)
  M[row :+ 1] = rowmax(m)
}

// A tile summed over blocks of rows, then reduced along and across its
// rows after the loop (the LLM example's read_roof). As a row value its
// layout would be the transpose's, its updates' reductions not deferred,
// each iteration one reduction through shared memory: the kernel keeps the
// tile (spec 15.23).
@autotune(C in [64], TR in [8])
@launch(64)
@grid(cdiv(R, TR))
kernel block_sums(Wd: tensor<i32>[R, C], Out: tensor<i32>[NB, 1]) {
  let r0 = ctx.block.x * TR
  var acc: tile<i32>[2, C] = 0
  for r in range(r0, min(R, r0 + TR), 2) {
    acc += Wd[r :+ 2, :]
  }
  Out[ctx.block.x :+ 1, 0 :+ 1] = rowsum(transpose(rowsum(acc)))
}
