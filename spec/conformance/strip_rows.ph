// Whole rows too wide for a thread's registers (spec 15.16): one program a
// row, the row one block of BN columns as a Triton port writes it, at thread
// counts that leave each thread 128 to 512 elements of a value. The values
// used again after a reduction are computed again there (remat.c), and each
// chain from loads to a reduction or a store runs in strips of columns
// (strip.c). The results are those of the whole tiles.
@autotune(BN in [16384], NT in [32, 128])
@launch(NT)
@grid(R)
kernel softmax_wide(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let row = program_id(0)
  let cols = iota(BN)
  let x = where(cols < N, X[row, 0 :+ BN], -inf)
  let num = exp(x - rowmax(x))
  Y[row, 0 :+ BN] = num / rowsum(num)
}

// RMS norm, bf16: the weight's load, issued early, would be held across the
// sum; it is read again after it.
@autotune(BN in [8192], NT in [32, 64])
@launch(NT)
@grid(R)
kernel rms_wide(X: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {
  let row = program_id(0)
  let x = f32(X[row, 0 :+ BN])
  let rs = 1.0 / sqrt(rowsum(x * x) / f32(N) + 0.00001)
  Y[row, 0 :+ BN] = bf16(x * rs * f32(W[0 :+ BN]))
}

// Two rows a program: [BR, BN] tiles, a rank-1 iota broadcast down the rows,
// the row values [BR, 1] broadcast along them; the last program's second
// row past the tensor.
@autotune(BR in [2], BN in [4096], NT in [32])
@launch(NT)
@grid(cdiv(R, BR))
kernel softmax_two(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = program_id(0) * BR
  let cols = iota(BN)
  let x = where(cols < N, X[r0 :+ BR, 0 :+ BN], -inf)
  let num = exp(x - rowmax(x))
  Y[r0 :+ BR, 0 :+ BN] = num / rowsum(num)
}

// A point read of the wide value: its chain is read outside the strips'
// operations, so it runs whole (and the point is read from a copy, through
// an exchange of the whole tile: 64 KiB of shared memory).
@autotune(BN in [16384], NT in [32])
@launch(NT)
@dynshared
@grid(R)
kernel softmax_point(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let row = program_id(0)
  let cols = iota(BN)
  let x = where(cols < N, X[row, 0 :+ BN], -inf)
  let num = exp(x - rowmax(x))
  let first = x[0]
  Y[row, 0 :+ BN] = num / rowsum(num) * (first - first + 1.0)
}

// Softmax and its logsumexp, the row's max and sum in one pass (spec
// 15.16): the strips keep an elementwise running max and a sum rescaled as
// it grows, so the row is read twice, not three times; columns that every
// strip masks (rows shorter than a strip) weigh nothing.
@autotune(BN in [16384], NT in [32, 128])
@launch(NT)
@grid(R)
kernel lse_wide(X: tensor<f32>[R, N], Y: tensor<f32>[R, N], Lse: tensor<f32>[R, 1]) {
  let row = program_id(0)
  let cols = iota(BN)
  let x = where(cols < N, X[row, 0 :+ BN], -inf)
  let m = rowmax(x)
  let s = rowsum(exp(x - m))
  Y[row, 0 :+ BN] = exp(x - m) / s
  Lse[row, 0 :+ 1] = m + log(s)
}

// The same max and sum with a store between them: the sum reads the row as
// stored (doubled), so the two chains are not one pass (a fused sum would
// read the row as loaded before the store). Rows of BN columns exactly.
@autotune(BN in [16384], NT in [32, 128])
@launch(NT)
@grid(R)
kernel lse_store_between(X: tensor<f32>[R, N], Lse: tensor<f32>[R, 1]) {
  let row = program_id(0)
  let m = rowmax(X[row, 0 :+ BN])
  X[row, 0 :+ BN] = X[row, 0 :+ BN] * 2.0
  let s = rowsum(exp(X[row, 0 :+ BN] - m))
  Lse[row, 0 :+ 1] = m + log(s)
}

// The one-pass max and sum where a row's first strips are all masked (its
// columns below K0 read as -inf): the running max must weigh them 0, not
// make the sum NaN (-inf - -inf) for the rest of the row.
@autotune(BN in [16384], NT in [32, 128], K0 in [4096])
@launch(NT)
@grid(R)
kernel lse_late(X: tensor<f32>[R, N], Y: tensor<f32>[R, N], Lse: tensor<f32>[R, 1]) {
  let row = program_id(0)
  let cols = iota(BN)
  let x = where(cols >= K0 && cols < N, X[row, 0 :+ BN], -inf)
  let m = rowmax(x)
  let s = rowsum(exp(x - m))
  Y[row, 0 :+ BN] = exp(x - m) / s
  Lse[row, 0 :+ 1] = m + log(s)
}
