// Row-wise int8 quantization (spec 15.12: 8-bit elements in 16-byte
// vectors, four to a word): each row's absolute max gives its scale, the
// row divided by it is truncated to i8 and stored, the scale beside it. The
// whole row one block; i8 rows of an odd length start off a 16-byte
// boundary (the shifted paths), and a u8 copy loads bytes back.
@autotune(BN in [1024], NT in [32, 128])
@launch(NT)
@grid(R)
kernel quant_row(X: tensor<f32>[R, N], Q: tensor<i8>[R, N], S: tensor<f32>[R]) {
  let row = program_id(0)
  let x = X[row, 0 :+ BN]
  let s = tmax(rowmax(tmax(x, -x)), 0.00001) / 127.0
  Q[row, 0 :+ BN] = i8(x / s)
  S[row :+ 1] = s
}

@autotune(BR in [1, 4], BN in [256])
@launch(128)
@grid(cdiv(R, BR))
kernel widen_u8(A: tensor<u8>[R, N], B: tensor<i32>[R, N]) {
  let r0 = program_id(0) * BR
  for c0 in range(0, N, BN) {
    B[r0 :+ BR, c0 :+ BN] = i32(A[r0 :+ BR, c0 :+ BN]) * 3 - 1
  }
}
