// Whole rows as one rank-1 block, as a Triton port writes them: a program a
// row, the row read as X[row, 0 :+ BN] with BN a power of two at least the
// row's length (the slack past N reads as zero, or as -inf through where),
// reduced and stored back (spec 15.12: a rank-1 access is one row of the
// blocked rows paths). The thread counts put one, two and eight chunks in
// a thread, and a row across one, four and thirty-two warps.
@autotune(BN in [1024], NT in [32, 128, 1024])
@launch(NT)
@grid(R)
kernel softmax_row(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let row = program_id(0)
  let cols = iota(BN)
  let x = where(cols < N, X[row, 0 :+ BN], -inf)
  let num = exp(x - rowmax(x))
  Y[row, 0 :+ BN] = num / rowsum(num)
}

// RMS norm with a weight vector, bf16 in and out: the rank-1 weight W[0 :+ BN]
// is a row of its own, and the conversion to bf16 is packed by the store.
@autotune(BN in [1024], NT in [64, 128, 1024])
@launch(NT)
@grid(R)
kernel rms_row(X: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {
  let row = program_id(0)
  let x = f32(X[row, 0 :+ BN])
  let rs = 1.0 / sqrt(rowsum(x * x) / f32(N) + 0.00001)
  Y[row, 0 :+ BN] = bf16(x * rs * f32(W[0 :+ BN]))
}

// Elementwise over whole rows, no reduction: c = silu(a) * b.
@autotune(BN in [2048], NT in [128, 256])
@launch(NT)
@grid(R)
kernel silu_mul_row(A: tensor<bf16>[R, N], B: tensor<bf16>[R, N], C: tensor<bf16>[R, N]) {
  let row = program_id(0)
  let a = f32(A[row, 0 :+ BN])
  C[row, 0 :+ BN] = bf16(a / (1.0 + exp(-a)) * f32(B[row, 0 :+ BN]))
}

// Rank-1 tensors in blocks of BS, the last block ragged.
@autotune(BS in [256, 1024])
@grid(cdiv(N, BS))
kernel add_vec(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N]) {
  let i0 = program_id(0) * BS
  Z[i0 :+ BS] = X[i0 :+ BS] + Y[i0 :+ BS]
}
