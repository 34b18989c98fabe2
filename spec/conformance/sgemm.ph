// SGEMM in the shape of the Phobos spec's example: program_id, spans, dot and
// +=, alpha and beta scalars, a doubling @autotune space, @aligned promises.
// @grid is added so the kernel launches by itself.
@autotune(TM in [32, 64], TN in [32, 64], TK in [8, 16])
@launch(256)
@pipeline
@aligned(M = TM, N = TN, K = TK)
@grid(cdiv(M, TM), cdiv(N, TN))
kernel sgemm(A: tensor<f32>[M, K],
             B: tensor<f32>[K, N],
             C: tensor<f32>[M, N],
             alpha: f32,
             beta: f32) {
  let pm = program_id(0)
  let pn = program_id(1)
  var acc: tile<f32>[TM, TN] = 0.0
  for kt in range(0, K, TK) {
    var a = A[pm * TM :+ TM, kt :+ TK]
    var b = B[kt :+ TK, pn * TN :+ TN]
    acc += dot(a, b)
  }
  let c_old = C[pm * TM :+ TM, pn * TN :+ TN]
  C[pm * TM :+ TM, pn * TN :+ TN] = alpha * acc + beta * c_old
}
