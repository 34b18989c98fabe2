// Multi-pass row kernels whose rows are longer than their column block, each
// with a staged-rows copy (spec 15.14): the CTA's rows of X are copied into
// shared memory once, by bulk copies in blocks of BN columns, and both passes
// read the copy. The cases give odd pitches (rows off 16-byte boundaries), a
// row shorter than one 16-byte granule, ragged row blocks, a base 16 bytes off
// a 256-byte boundary (the copy runs) and one 2 bytes off (only the variants
// run: the copy needs a 16-byte aligned base).

// Online softmax over bf16 rows, the first pass masked past N.
@autotune(BR in [1, 4], BN in [64, 256])
@launch(128)
@grid(cdiv(R, BR))
kernel softmax_bf16_rows(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N]) {
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

// LayerNorm with weight and bias: sums over the staged rows, then the
// normalized rows with W and B loaded from memory.
@autotune(BR in [1, 2], BN in [128, 512])
@launch(256)
@grid(cdiv(R, BR))
kernel layer_norm_rows(X: tensor<bf16>[R, N], W: tensor<bf16>[N], B: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {
  let r0 = ctx.block.x * BR
  var s1: tile<f32>[BR, 1] = 0.0
  var s2: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let x = f32(X[r0 :+ BR, c0 :+ BN])
    s1 += rowsum(x)
    s2 += rowsum(x * x)
  }
  let mean = s1 / f32(N)
  let rstd = 1.0 / sqrt(tmax(s2 / f32(N) - mean * mean, 0.0) + 0.00001)
  for c0 in range(0, N, BN) {
    let x = X[r0 :+ BR, c0 :+ BN]
    Y[r0 :+ BR, c0 :+ BN] = bf16((x - mean) * rstd * W[c0 :+ BN] + B[c0 :+ BN])
  }
}

// Row blocks that start one row before the CTA's share: the first CTA's
// block begins at row -1 (masked, never read), so the copy must start at
// the first row inside the tensor.
@autotune(BR in [4], BN in [64])
@launch(128)
@grid(cdiv(R + 1, BR))
kernel softmax_shifted(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N]) {
  let r0 = ctx.block.x * BR - 1
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
