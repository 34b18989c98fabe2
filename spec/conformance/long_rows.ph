// One warp a CTA and [8, 128] tiles, in a kernel whose chunks are one
// element (rowmax's [8, 1] result): each thread holds four columns of every
// row, so the load and the store take the long-rows path (spec 15.6) and
// the row max broadcasts from one shared word a row.
@launch(32)
@grid(cdiv(R, 8), cdiv(C, 128))
kernel long_rows(X: tensor<f32>[R, C], Y: tensor<f32>[R, C]) {
  let r0 = ctx.block.x * 8
  let c0 = ctx.block.y * 128
  let x = X[r0 :+ 8, c0 :+ 128]
  let m = rowmax(x)
  Y[r0 :+ 8, c0 :+ 128] = x - m + 1.0
}

// The same over blocks of 80 columns: the tile's rows are padded to 128,
// so the fourth column of each thread (96 to 127) is slack in every row
// and must be neither loaded nor stored.
@launch(32)
@grid(cdiv(R, 8), cdiv(C, 80))
kernel long_rows_80(X: tensor<f32>[R, C], Y: tensor<f32>[R, C]) {
  let r0 = ctx.block.x * 8
  let c0 = ctx.block.y * 80
  let x = X[r0 :+ 8, c0 :+ 80]
  let m = rowmax(x)
  Y[r0 :+ 8, c0 :+ 80] = x - m + 1.0
}

// Columns that are not the tensor's contiguous dim (a point subscript
// follows them): the long-rows paths do not apply (their offsets assume a
// contiguous row), and the general paths step by the dim's stride.
@launch(32)
@grid(cdiv(R, 8), cdiv(C, 128))
kernel long_rows_strided(X: tensor<f32>[R, C, 2], Y: tensor<f32>[R, C, 2]) {
  let r0 = ctx.block.x * 8
  let c0 = ctx.block.y * 128
  let x = X[r0 :+ 8, c0 :+ 128, 1]
  Y[r0 :+ 8, c0 :+ 128, 1] = x - rowmax(x) + 1.0
}

// A [1, 1] value whose rows the plan pads (a tensor-core dot's result)
// broadcast over a [16, 128] tile of one-element chunks: every row takes
// the value's one element, not its padding rows.
@launch(32)
@grid(cdiv(R, 16), cdiv(C, 128))
kernel long_rows_scalar_dot(A: tensor<f16>[1, 16], B: tensor<f16>[16, 1], Z: tensor<f32>[R, C], Y: tensor<f32>[R, C]) {
  let r0 = ctx.block.x * 16
  let c0 = ctx.block.y * 128
  let s = dot(A[0 :+ 1, 0 :+ 16], B[0 :+ 16, 0 :+ 1])
  let z = Z[r0 :+ 16, c0 :+ 128]
  Y[r0 :+ 16, c0 :+ 128] = z + s + rowmax(z) * 0.0
}
