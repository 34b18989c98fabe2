// Q8_0 matvec, written for the first PTX backend: C[1, N] = A[1, K] @ (W * S).
//
// The seed's kernel (q8_matvec.ph) contracts a [1, 32] x [32, 64] dot every
// iteration; the first backend exchanges dot operands through shared memory,
// two barriers each time. This version never exchanges inside the loop: a
// CTA takes TN = 256 columns with 256 threads, so each thread's elements of
// the [32, 256] weight tile are exactly one column (the flat distribution
// puts consecutive threads on consecutive columns: coalesced byte loads).
// The activations and scales broadcast by loading again, not by exchange.
// The 32 partial rows are summed once, after the loop, with a dot.
@autotune(TN in [256])
@launch(256)
@grid(cdiv(N, TN))
kernel q8_matvec_wide(A: tensor<f32>[1, K],
                      W: tensor<i8>[K, N],
                      S: tensor<f32>[KB, N],
                      C: tensor<f32>[1, N]) {
  let n0 = ctx.block.x * TN
  var acc: tile<f32>[32, TN] = 0.0
  for k in range(0, K, 32) {
    let w = W[k :+ 32, n0 :+ TN]             // [32, TN] bytes, one column per thread
    let a = transpose(A[0 :+ 1, k :+ 32])    // [32, 1] activations of this block
    let s = S[k / 32 :+ 1, n0 :+ TN]         // [1, TN] the block's scales
    acc += f32(w) * a * s
  }
  var ones: tile<f32>[1, 32] = 1.0
  C[0 :+ 1, n0 :+ TN] = dot(ones, acc)
}
