// Elementwise and shape builtins, one kernel each: exp, exp2, log, sqrt, tanh,
// tmax, tmin, min, max, cdiv, transpose, where, iota. Most run over [5, 12]
// tiles (padded to [8, 16]) of tensors whose rows are not a multiple of 5.

@grid(cdiv(M, 5))
kernel math_exp(X: tensor<f32>[M, 12], Y: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  Y[r0 :+ 5, :] = exp(X[r0 :+ 5, :])
}

@grid(cdiv(M, 5))
kernel math_exp2(X: tensor<f32>[M, 12], Y: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  Y[r0 :+ 5, :] = exp2(X[r0 :+ 5, :])
}

@grid(cdiv(M, 5))
kernel math_log(X: tensor<f32>[M, 12], Y: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  Y[r0 :+ 5, :] = log(X[r0 :+ 5, :])
}

@grid(cdiv(M, 5))
kernel math_sqrt(X: tensor<f32>[M, 12], Y: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  Y[r0 :+ 5, :] = sqrt(X[r0 :+ 5, :])
}

// tanh on f16: the result is rounded to f16.
@grid(cdiv(M, 5))
kernel math_tanh_f16(X: tensor<f16>[M, 12], Y: tensor<f16>[M, 12]) {
  let r0 = ctx.block.x * 5
  Y[r0 :+ 5, :] = tanh(X[r0 :+ 5, :])
}

// tmax with a [5, 1] column and with a scalar, tmin with a [1, 12] row.
@grid(cdiv(M, 5))
kernel tmax_tmin(X: tensor<f32>[M, 12], R: tensor<f32>[M, 1], C: tensor<f32>[1, 12],
                 Y: tensor<f32>[M, 12], Z: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  Y[r0 :+ 5, :] = tmax(tmax(x, R[r0 :+ 5, :]), -0.5)
  Z[r0 :+ 5, :] = tmin(x, C[0 :+ 1, :])
}

// Scalar builtins: min, max and cdiv of i32 scalars read with point
// subscripts, one result per row i of P: [min(a, b), max(a, b), cdiv(a, c)]
// with c = max(1, |c|) (cdiv needs a positive divisor).
@grid(N)
kernel scalar_min_max_cdiv(P: tensor<i32>[N, 3], Y: tensor<i32>[N, 3]) {
  let i = ctx.block.x
  let a = P[i, 0]
  let b = P[i, 1]
  let c = max(1, max(P[i, 2], -P[i, 2]))
  Y[i, 0] = min(a, b)
  Y[i, 1] = max(a, b)
  Y[i, 2] = cdiv(a, c)
}

// transpose of a [5, 12] tile into a [12, 5] slice: Y = X^T.
@grid(cdiv(M, 5))
kernel transpose_tile(X: tensor<f32>[M, 12], Y: tensor<f32>[12, M]) {
  let r0 = ctx.block.x * 5
  Y[:, r0 :+ 5] = transpose(X[r0 :+ 5, :])
}

// where with a tile condition and tile branches, and with a scalar branch.
@grid(cdiv(M, 5))
kernel where_select(X: tensor<f32>[M, 12], W: tensor<f32>[M, 12], Y: tensor<f32>[M, 12],
                    Z: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  let w = W[r0 :+ 5, :]
  Y[r0 :+ 5, :] = where(x > w, x, w * 2.0)
  Z[r0 :+ 5, :] = where(x < 0.0, 0.0, x)
}

// iota over a [5, 12] tile along axis 0 and along the default (last) axis:
// Y[i, j] = 100 * i + j.
@grid(cdiv(M, 5))
kernel iota_2d(Y: tensor<i32>[M, 12]) {
  let r0 = ctx.block.x * 5
  Y[r0 :+ 5, :] = (r0 + iota(5, 12, axis = 0)) * 100 + iota(5, 12)
}

// iota over a [3, 5, 7] tile along each axis: Y[a, b, c] = 100a + 10b + c.
@grid(1)
kernel iota_3d(Y: tensor<i32>[3, 5, 7]) {
  Y[:, :, :] = iota(3, 5, 7, axis = 0) * 100 + iota(3, 5, 7, axis = 1) * 10 + iota(3, 5, 7, axis = 2)
}
