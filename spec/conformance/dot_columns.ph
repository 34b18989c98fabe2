// dot of a few rows against columns the threads own (spec 15.x, DOT_COLUMNS):
// [M <= 8, K] x [K, N] with B a register tile whose columns each thread
// holds whole. A decode batch's projection: the weights converted from
// int8 in registers, read once for all the rows. Here A is computed in the
// kernel (the rows scaled by a weight row, as a folded RMSNorm would), so
// it goes through the dot's small exchange area for every thread to read.
@autotune(MR in [4], TN in [256])
@launch(64)
@grid(cdiv(N, TN))
@requires(M <= MR)
kernel rows_gated_columns(A: tensor<f32>[M, K],
                          G: tensor<f32>[1, K],
                          W: tensor<i8>[K, N],
                          C: tensor<f32>[M, N]) {
  let n0 = ctx.block.x * TN
  var acc: tile<f32>[MR, TN] = 0.0
  for k in range(0, K, 32) {
    let a = A[0 :+ MR, k :+ 32] * G[0 :+ 1, k :+ 32]
    var wf: tile<f32>[32, TN] = f32(W[k :+ 32, n0 :+ TN])
    acc += dot(a, wf)
  }
  C[0 :+ MR, n0 :+ TN] = acc
}
