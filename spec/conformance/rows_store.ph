// Row stores whose rows are not 16-byte aligned: a row pitch that is no
// multiple of 16 bytes (N odd for bf16, N mod 4 = 1 for f32) moves each
// row's start by a different amount. Every layout of the blocked rows:
// several warps along a row (BR 1, BN 2048), a warp a row with one or
// several chunks a lane (BR 8, BN 256 / 1024), several rows a warp
// (BN 64). Y = 2X + 1.
@autotune(BR in [1, 8, 32], BN in [64, 256, 1024, 2048])
@launch(256)
@grid(cdiv(M, BR), cdiv(N, BN))
kernel scale_rows_bf16(X: tensor<bf16>[M, N], Y: tensor<bf16>[M, N]) {
  let r0 = ctx.block.x * BR
  let c0 = ctx.block.y * BN
  Y[r0 :+ BR, c0 :+ BN] = bf16(f32(X[r0 :+ BR, c0 :+ BN]) * 2.0 + 1.0)
}

@autotune(BR in [1, 8], BN in [64, 256, 1024])
@launch(256)
@grid(cdiv(M, BR), cdiv(N, BN))
kernel scale_rows_f32(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let r0 = ctx.block.x * BR
  let c0 = ctx.block.y * BN
  Y[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] * 2.0 + 1.0
}
