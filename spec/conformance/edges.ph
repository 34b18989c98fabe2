// Edges of the blocked rows paths (spec 15.12), as a review wrote them: slices
// that start before the tensor (c0 = -(SH - 1), h0 = -2: negative starts read
// as slack), rank-1 rows with a weight row, rank-3 blocks, a row vector in the
// columns layout, and 8-bit elements in rank 1 and 3, over ragged, odd and
// misaligned extents; each output element is 2x + w, 2x + 1 or 3x.
@autotune(BN in [1024, 8192], NT in [128, 1024], SH in [1, 4, 9])
@launch(NT)
@grid(R, cdiv(N + SH - 1, BN))
kernel r1(X: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {
  let row = program_id(0)
  let c0 = program_id(1) * BN - (SH - 1)
  Y[row, c0 :+ BN] = bf16(2.0 * f32(X[row, c0 :+ BN]) + f32(W[c0 :+ BN]))
}

@autotune(BT in [1, 4], BH in [8], SH in [1, 4, 9])
@launch(128)
@grid(cdiv(T + SH - 1, BT), cdiv(H + 2, BH))
kernel r3(X: tensor<bf16>[T, H, D], Y: tensor<bf16>[T, H, D]) {
  let t0 = program_id(0) * BT - (SH - 1)
  let h0 = program_id(1) * BH - 2
  Y[t0 :+ BT, h0 :+ BH, 0 :+ 64] = bf16(2.0 * f32(X[t0 :+ BT, h0 :+ BH, 0 :+ 64]) + 1.0)
}

@autotune(BR in [2, 8], BN in [2048], SH in [1, 4, 9])
@launch(128)
@grid(cdiv(R, BR), cdiv(N + SH - 1, BN))
kernel cols(X: tensor<f32>[R, N], W: tensor<f32>[N], Y: tensor<f32>[R, N]) {
  let r0 = program_id(0) * BR
  let c0 = program_id(1) * BN - (SH - 1)
  Y[r0 :+ BR, c0 :+ BN] = 2.0 * X[r0 :+ BR, c0 :+ BN] + W[c0 :+ BN]
}

@autotune(BN in [4096], NT in [128, 256], SH in [1, 4, 9])
@launch(NT)
@grid(R, cdiv(N + SH - 1, BN))
kernel i8r(A: tensor<i8>[R, N], B: tensor<i8>[R, N]) {
  let row = program_id(0)
  let c0 = program_id(1) * BN - (SH - 1)
  B[row, c0 :+ BN] = A[row, c0 :+ BN] * i8(3)
}

@autotune(BT in [2], BH in [8], SH in [1, 4, 9])
@launch(128)
@grid(cdiv(T + SH - 1, BT), cdiv(H + 2, BH))
kernel i83(A: tensor<i8>[T, H, D], B: tensor<i8>[T, H, D]) {
  let t0 = program_id(0) * BT - (SH - 1)
  let h0 = program_id(1) * BH - 2
  B[t0 :+ BT, h0 :+ BH, 0 :+ 128] = A[t0 :+ BT, h0 :+ BH, 0 :+ 128] * i8(3)
}
