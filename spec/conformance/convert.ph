// Explicit conversions T(x). Float to float rounds to nearest even; float to
// integer truncates toward zero and saturates at the type's range.

// f16(x) and bf16(x) of f32 values, widened back to f32 on the store, so
// the rounding that the conversion does is what the output shows.
@grid(cdiv(M, 5))
kernel to_f16_bf16(X: tensor<f32>[M, 12], H: tensor<f32>[M, 12], BH: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  H[r0 :+ 5, :] = f16(x)
  BH[r0 :+ 5, :] = bf16(x)
}

// f32(x) of f64 values rounds to single precision (stored widened back to
// f64); f64(x) of f32 values makes the product exact (no f32 rounding).
@grid(cdiv(M, 5))
kernel to_f32_f64(D: tensor<f64>[M, 12], X: tensor<f32>[M, 12], W: tensor<f32>[M, 12],
                  S: tensor<f64>[M, 12], P: tensor<f64>[M, 12]) {
  let r0 = ctx.block.x * 5
  S[r0 :+ 5, :] = f32(D[r0 :+ 5, :])
  P[r0 :+ 5, :] = f64(X[r0 :+ 5, :]) * f64(W[r0 :+ 5, :])
}

// i8(x), u8(x), i32(x), i64(x) of f32 values: truncation toward zero and
// saturation (X spans [-300, 300] for the 8-bit types, L spans
// [-6e9, 6e9] for i32 and i64).
@grid(cdiv(M, 5))
kernel to_int(X: tensor<f32>[M, 12], L: tensor<f32>[M, 12], A: tensor<i8>[M, 12], B: tensor<u8>[M, 12],
              C: tensor<i32>[M, 12], D: tensor<i32>[M, 12], E: tensor<i64>[M, 12]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  let l = L[r0 :+ 5, :]
  A[r0 :+ 5, :] = i8(x)
  B[r0 :+ 5, :] = u8(x)
  C[r0 :+ 5, :] = i32(x)
  D[r0 :+ 5, :] = i32(l)
  E[r0 :+ 5, :] = i64(l)
}

// Integer to float and integer widening: f32 of an i32 tile (exact for
// these values), f16 of an i8 tile, and i64(i32) products that would
// overflow 32 bits.
@grid(cdiv(M, 5))
kernel int_to_other(I: tensor<i32>[M, 12], J: tensor<i8>[M, 12], F: tensor<f32>[M, 12],
                    H: tensor<f16>[M, 12], P: tensor<i64>[M, 12]) {
  let r0 = ctx.block.x * 5
  let i = I[r0 :+ 5, :]
  F[r0 :+ 5, :] = f32(i) * 0.5
  H[r0 :+ 5, :] = f16(J[r0 :+ 5, :])
  P[r0 :+ 5, :] = i64(i) * i64(i)
}
