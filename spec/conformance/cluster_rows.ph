// Cluster-rows copies (spec 15.22): a row block taken by a cluster of 4 or 8
// CTAs, each top-level loop over the row dim split among them (CTA k takes
// blocks k, k + C, ...), the loops' deferred accumulators met across the
// cluster. The cases give rows of several blocks (every CTA has some), of
// two blocks (of 4 CTAs two see nothing, of 8 six), ragged row blocks (BR 2 over an
// odd row count) and one block (the copies are not launched); each checked
// against the interpreter, which walks every block in one program.

// Softmax: an online logsumexp, then a pass that writes every block.
@autotune(BR in [1, 2], NT in [32, 64])
@launch(NT)
@grid(cdiv(R, BR))
kernel softmax_rows(X: tensor<f32>[R, N], Y: tensor<f32>[R, N], Lse: tensor<f32>[R, 1]) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = -inf
  var l: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, 64) {
    let cols = c0 + iota(BR, 64)
    let x = where(cols < N, X[r0 :+ BR, c0 :+ 64], -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  // every CTA of a cluster stores the same row values
  Lse[r0 :+ BR, 0 :+ 1] = m + log(l)
  for c0 in range(0, N, 64) {
    Y[r0 :+ BR, c0 :+ 64] = exp(X[r0 :+ BR, c0 :+ 64] - m) / l
  }
}

// A layer norm of three loops: sums of x and x^2 and a max in the first
// (three accumulators), a sum of |x - mean| in the second, then the rows
// written; an f64 and an i32 sum beside them.
@autotune(BR in [1, 2])
@launch(64)
@grid(cdiv(R, BR))
kernel norm_rows(X: tensor<f32>[R, N], I: tensor<i32>[R, N], Y: tensor<f32>[R, N], Stats: tensor<f32>[R, 4],
                 Wide: tensor<f64>[R, 1], Isum: tensor<i32>[R, 1]) {
  let r0 = ctx.block.x * BR
  var s: tile<f32>[BR, 1] = 0.0
  var q: tile<f32>[BR, 1] = 0.0
  var mx: tile<f32>[BR, 1] = -1000.0
  var w: tile<f64>[BR, 1] = 0.5
  var si: tile<i32>[BR, 1] = 3
  for c0 in range(0, N, 32) {
    let x = X[r0 :+ BR, c0 :+ 32]
    s += rowsum(x)
    q = q + rowsum(x * x)
    mx = tmax(mx, rowmax(x))
    w += rowsum(f64(x))
    si += rowsum(I[r0 :+ BR, c0 :+ 32])
  }
  let mean = s / f32(N)
  var a: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, 32) {
    let cols = c0 + iota(BR, 32)
    a += rowsum(where(cols < N, abs(X[r0 :+ BR, c0 :+ 32] - mean), 0.0))
  }
  let rstd = rsqrt(q / f32(N) - mean * mean + 0.001)
  for c0 in range(0, N, 32) {
    Y[r0 :+ BR, c0 :+ 32] = (X[r0 :+ BR, c0 :+ 32] - mean) * rstd
  }
  Stats[r0 :+ BR, 0 :+ 1] = mean
  Stats[r0 :+ BR, 1 :+ 1] = rstd
  Stats[r0 :+ BR, 2 :+ 1] = mx
  Stats[r0 :+ BR, 3 :+ 1] = a / f32(N)
  Wide[r0 :+ BR, 0 :+ 1] = w
  Isum[r0 :+ BR, 0 :+ 1] = si
}

// Not split: a running sum read inside its loop (each block's prefix) is
// no deferred accumulator, so the kernel gains no cluster copy.
@launch(64)
@grid(R)
kernel prefix_rows(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 64) {
    s += rowsum(X[r :+ 1, c0 :+ 64])
    Y[r :+ 1, c0 :+ 64] = X[r :+ 1, c0 :+ 64] + s
  }
}

// In place: the row's blocks read in both loops and written in the second,
// each at the loop's own block with one step, so every block is one CTA's
// in both loops and the kernel gains cluster copies.
@launch(64)
@grid(R)
kernel softmax_inplace(X: tensor<f32>[R, N], Lse: tensor<f32>[R, 1]) {
  let r = ctx.block.x
  var m: tile<f32>[1, 1] = -inf
  var l: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 64) {
    let cols = c0 + iota(1, 64)
    let x = where(cols < N, X[r :+ 1, c0 :+ 64], -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  Lse[r :+ 1, 0 :+ 1] = m + log(l)
  for c0 in range(0, N, 64) {
    X[r :+ 1, c0 :+ 64] = exp(X[r :+ 1, c0 :+ 64] - m) / l
  }
}

// Not split: the second loop reads the block after its own from the tensor
// it writes, which another CTA of a cluster would write.
@launch(64)
@grid(R)
kernel shift_inplace(X: tensor<f32>[R, N], Lse: tensor<f32>[R, 1]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 64) {
    s += rowsum(X[r :+ 1, c0 :+ 64])
  }
  Lse[r :+ 1, 0 :+ 1] = s
  for c0 in range(0, N, 64) {
    X[r :+ 1, c0 :+ 64] = X[r :+ 1, c0 + 64 :+ 64] - s
  }
}

// Not split (each checked by tests/cli.sh): an atomic add after the loop
// (each CTA of a cluster would add), a store before the split loop to the
// tensor it writes, and two write loops of different steps (a block's
// writes in two CTAs with no order between them).
@launch(64)
@grid(R)
kernel atomic_loss(X: tensor<f32>[R, N], Loss: tensor<f32>[1, 1]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 64) {
    s += rowsum(X[r :+ 1, c0 :+ 64])
  }
  atomic_add(Loss[0 :+ 1, 0 :+ 1], s)
}

@launch(64)
@grid(R)
kernel store_before(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r = ctx.block.x
  Y[r :+ 1, 0 :+ 64] = X[r :+ 1, 0 :+ 64] * 0.0
  var s: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 64) {
    s += rowsum(X[r :+ 1, c0 :+ 64])
    Y[r :+ 1, c0 :+ 64] = X[r :+ 1, c0 :+ 64]
  }
}

@launch(64)
@grid(R)
kernel two_steps(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r = ctx.block.x
  var s: tile<f32>[1, 1] = 0.0
  for c0 in range(0, N, 64) {
    s += rowsum(X[r :+ 1, c0 :+ 64])
    Y[r :+ 1, c0 :+ 64] = X[r :+ 1, c0 :+ 64]
  }
  for c0 in range(0, N, 128) {
    Y[r :+ 1, c0 :+ 128] = X[r :+ 1, c0 :+ 128] - s
  }
}

// Weights of one dim (W[c0 :+ 32], every row's) loaded in both split loops
// at their own blocks, and a row value stored between the loops (X and W
// are then listed apart): a weighted sum and max, then each element less
// the sum plus the max.
@autotune(BR in [1, 2])
@launch(64)
@grid(cdiv(R, BR))
kernel weighted_rows(X: tensor<f32>[R, N], W: tensor<f32>[N], Y: tensor<f32>[R, N], S: tensor<f32>[R, 1]) {
  let r0 = ctx.block.x * BR
  var s: tile<f32>[BR, 1] = 0.0
  var mx: tile<f32>[BR, 1] = -inf
  for c0 in range(0, N, 32) {
    let cols = c0 + iota(BR, 32)
    let xw = X[r0 :+ BR, c0 :+ 32] * W[c0 :+ 32]
    s += rowsum(xw)
    mx = tmax(mx, rowmax(where(cols < N, xw, -inf)))
  }
  S[r0 :+ BR, 0 :+ 1] = s
  for c0 in range(0, N, 32) {
    Y[r0 :+ BR, c0 :+ 32] = X[r0 :+ BR, c0 :+ 32] * W[c0 :+ 32] - s + mx
  }
}
