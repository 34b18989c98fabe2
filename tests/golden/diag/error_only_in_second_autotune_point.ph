@autotune(BN in [32, 64])
@launch(128)
kernel lead_cols(X: tensor<f32>[M, 48], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * 16
  var buf: tile<f32>[16, 48] = X[r :+ 16, :]
  let lead = buf[:, 0 :+ BN]
  Y[r :+ 16, 0 :+ BN] = lead
}
