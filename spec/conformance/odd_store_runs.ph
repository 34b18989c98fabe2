// Stores whose rows are not 16-byte aligned, of rows that span several
// warps (spec 15.12): 128 threads a row block of BN columns, so 4 warps
// share each row and each holds 2 (BN 1024 f32, 2048 bf16) or more chunk
// repetitions, its chunks of a row one run: a lane passes the bytes that
// cross into the next chunk to its neighbour, lane 31 to lane 0 a
// repetition on, and only a warp's first and last chunk of the row store
// their own bytes in pieces.
@autotune(BN in [1024, 4096])
@launch(128)
@grid(R)
kernel scale_rows_f32(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r = ctx.block.x
  for c0 in range(0, N, BN) {
    Y[r :+ 1, c0 :+ BN] = X[r :+ 1, c0 :+ BN] * 2.0 + 1.0
  }
}

@autotune(BN in [2048, 8192])
@launch(128)
@grid(R)
kernel scale_rows_bf16(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N]) {
  let r = ctx.block.x
  for c0 in range(0, N, BN) {
    Y[r :+ 1, c0 :+ BN] = bf16(f32(X[r :+ 1, c0 :+ BN]) * 2.0 + 1.0)
  }
}
