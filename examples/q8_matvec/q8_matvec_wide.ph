// Q8_0 matvec, the seed's kernel (q8_matvec.ph) made wide for the first PTX
// backend: a CTA of TILE_N threads takes TILE_N columns, so each thread owns
// one column of the [BLK, TILE_N] weight tile with all BLK of its rows, and
// dot(a, wf) contracts inside each thread, reading the staged activations
// from shared memory: no exchange in the loop. TILE_N = threads is tuned:
// more CTAs for small N, wider rows for large.
@autotune(TILE_N in [64, 256], BLK in [32])
@launch(TILE_N)
@grid(cdiv(N, TILE_N))
kernel q8_matvec_wide(A: tensor<f32>[1, K],
                      W: tensor<i8>[K, N],
                      S: tensor<f32>[KB, N],
                      C: tensor<f32>[1, N]) {
  let pn = ctx.block.x
  var acc: tile<f32>[1, TILE_N] = 0.0
  for k in range(0, K, BLK) {
    let b = k / BLK
    let a = A[0 :+ 1, k :+ BLK]
    let w = W[k :+ BLK, pn * TILE_N :+ TILE_N]
    let s = S[b :+ 1, pn * TILE_N :+ TILE_N]
    var wf: tile<f32>[BLK, TILE_N] = f32(w)
    var part: tile<f32>[1, TILE_N] = dot(a, wf)
    acc += part * s
  }
  C[0 :+ 1, pn * TILE_N :+ TILE_N] = acc
}
