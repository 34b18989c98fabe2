// Rank-3 register tiles in the blocked layout (spec 15.12): [BT, BH, D]
// blocks of [T, H, D] tensors, a few tokens' heads a CTA, the rows of a
// thread not a constant step apart. A per-head RMS norm with a weight over
// the head dim (QK-norm), and an elementwise scale; heads and tokens ragged.
@autotune(BT in [1, 4], BH in [8])
@launch(128)
@grid(cdiv(T, BT))
kernel head_norm(X: tensor<bf16>[T, H, D], W: tensor<bf16>[D], Y: tensor<bf16>[T, H, D]) {
  let t0 = program_id(0) * BT
  let x = f32(X[t0 :+ BT, 0 :+ BH, 0 :+ 128])
  let rs = 1.0 / sqrt(rowsum(x * x) / f32(D) + 0.00001)
  Y[t0 :+ BT, 0 :+ BH, 0 :+ 128] = bf16(x * rs * f32(W[0 :+ 128]))
}

@autotune(BT in [2, 8])
@launch(128)
@grid(cdiv(T, BT), cdiv(H, 4))
kernel scale3(X: tensor<f32>[T, H, D], Y: tensor<f32>[T, H, D]) {
  let t0 = program_id(0) * BT
  let h0 = program_id(1) * 4
  Y[t0 :+ BT, h0 :+ 4, 0 :+ 64] = X[t0 :+ BT, h0 :+ 4, 0 :+ 64] * 2.0 + 1.0
}
