// Operators: unary - ! ~, integer + - * / % (division truncates), shifts
// and bitwise operators, comparisons and && ||, and broadcasting.

// -x on f32 and i32, ~x on i32, !c on a bool tile (as where(!c, 1, 0)).
@grid(cdiv(M, 5))
kernel unary_ops(X: tensor<f32>[M, 12], I: tensor<i32>[M, 12], NX: tensor<f32>[M, 12],
                 NI: tensor<i32>[M, 12], CI: tensor<i32>[M, 12], NB: tensor<i32>[M, 12]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  let i = I[r0 :+ 5, :]
  NX[r0 :+ 5, :] = -x
  NI[r0 :+ 5, :] = -i
  CI[r0 :+ 5, :] = ~i
  NB[r0 :+ 5, :] = where(!(x > 0.0), 1, 0)
}

// i32 + - * / % with negative operands: / and % truncate toward zero. The
// divisor d = where(b >= 0, b + 1, b) is never zero.
@grid(cdiv(M, 5))
kernel int_arith(A: tensor<i32>[M, 12], B: tensor<i32>[M, 12], Y: tensor<i32>[M, 12, 5]) {
  let r0 = ctx.block.x * 5
  let a = A[r0 :+ 5, :]
  let b = B[r0 :+ 5, :]
  let d = where(b >= 0, b + 1, b)
  Y[r0 :+ 5, :, 0] = a + b
  Y[r0 :+ 5, :, 1] = a - b
  Y[r0 :+ 5, :, 2] = a * b
  Y[r0 :+ 5, :, 3] = a / d
  Y[r0 :+ 5, :, 4] = a % d
}

// / and % by constants, on i32 and i64 of both signs: powers of two (the
// backend shifts, biasing negative dividends so they still truncate toward
// zero), 1, and a divisor that is not a power of two (multiply-high).
@grid(cdiv(M, 5))
kernel int_divrem_const(A: tensor<i32>[M, 12], L: tensor<i64>[M, 12], Y: tensor<i32>[M, 12, 6],
                        Z: tensor<i64>[M, 12, 4]) {
  let r0 = ctx.block.x * 5
  let a = A[r0 :+ 5, :]
  let l = L[r0 :+ 5, :]
  Y[r0 :+ 5, :, 0] = a / 8
  Y[r0 :+ 5, :, 1] = a % 8
  Y[r0 :+ 5, :, 2] = a / 1
  Y[r0 :+ 5, :, 3] = a % 1
  Y[r0 :+ 5, :, 4] = a / 6
  Y[r0 :+ 5, :, 5] = a % 32
  Z[r0 :+ 5, :, 0] = l / 1024
  Z[r0 :+ 5, :, 1] = l % 1024
  Z[r0 :+ 5, :, 2] = l / 2
  Z[r0 :+ 5, :, 3] = l % 6
}

// Float + - * / in f16: each result is rounded to f16.
@grid(cdiv(M, 5))
kernel f16_arith(A: tensor<f16>[M, 12], B: tensor<f16>[M, 12], Y: tensor<f16>[M, 12, 4]) {
  let r0 = ctx.block.x * 5
  let a = A[r0 :+ 5, :]
  let b = B[r0 :+ 5, :]
  Y[r0 :+ 5, :, 0] = a + b
  Y[r0 :+ 5, :, 1] = a - b
  Y[r0 :+ 5, :, 2] = a * b
  Y[r0 :+ 5, :, 3] = a / b
}

// << >> & | ^ on i32; >> of a negative value is arithmetic.
@grid(cdiv(M, 5))
kernel bit_ops(A: tensor<i32>[M, 12], S: tensor<i32>[M, 12], Y: tensor<i32>[M, 12, 5]) {
  let r0 = ctx.block.x * 5
  let a = A[r0 :+ 5, :]
  let s = S[r0 :+ 5, :]
  Y[r0 :+ 5, :, 0] = a << s
  Y[r0 :+ 5, :, 1] = a >> s
  Y[r0 :+ 5, :, 2] = a & 0x5a5
  Y[r0 :+ 5, :, 3] = a | s
  Y[r0 :+ 5, :, 4] = a ^ (s * 77)
}

// < > <= >= == != on f32, && || and bool & | ^, packed into bits of an i32.
@grid(cdiv(M, 5))
kernel compare_logic(A: tensor<f32>[M, 12], B: tensor<f32>[M, 12], Y: tensor<i32>[M, 12]) {
  let r0 = ctx.block.x * 5
  let a = A[r0 :+ 5, :]
  let b = B[r0 :+ 5, :]
  let an = a < 0.0
  let bn = b < 0.0
  Y[r0 :+ 5, :] = where(a < b, 1, 0) | where(a > b, 2, 0) | where(a <= b, 4, 0) | where(a >= b, 8, 0) |
                  where(a == b, 16, 0) | where(a != b, 32, 0) | where(an && bn, 64, 0) |
                  where(an || bn, 128, 0) | where(an ^ bn, 256, 0) | where(an & bn, 512, 0) |
                  where(an | bn, 1024, 0)
}

// Broadcasting: a [5, 1] column, a [1, 12] row, a rank-1 [12] row and a
// scalar parameter against a [5, 12] tile.
@grid(cdiv(M, 5))
kernel broadcast(X: tensor<f32>[M, 12], R: tensor<f32>[M, 1], C: tensor<f32>[1, 12], V: tensor<f32>[12],
                 Y: tensor<f32>[M, 12], s: f32) {
  let r0 = ctx.block.x * 5
  Y[r0 :+ 5, :] = X[r0 :+ 5, :] * R[r0 :+ 5, :] + C[0 :+ 1, :] - V[:] * s + R[r0 :+ 5, :] * C[0 :+ 1, :]
}

// Element type joins (§7.1): f16 + bf16 is f32 (no 16-bit rounding), i32 +
// f16 is f16 (rounded to half), i8 * 1.5 is f32, i8 + u8 is i32 (no 8-bit
// wrap).
@grid(cdiv(M, 5))
kernel join_types(H: tensor<f16>[M, 12], BH: tensor<bf16>[M, 12], I: tensor<i32>[M, 12], A: tensor<i8>[M, 12],
                  U: tensor<u8>[M, 12], F: tensor<f32>[M, 12], G: tensor<f32>[M, 12], P: tensor<f32>[M, 12],
                  S: tensor<i32>[M, 12]) {
  let r0 = ctx.block.x * 5
  let h = H[r0 :+ 5, :]
  let a = A[r0 :+ 5, :]
  F[r0 :+ 5, :] = h + BH[r0 :+ 5, :]
  G[r0 :+ 5, :] = I[r0 :+ 5, :] + h
  P[r0 :+ 5, :] = a * 1.5
  S[r0 :+ 5, :] = a + U[r0 :+ 5, :]
}
