// Flash attention in the shape of the Phobos spec's example: dot_t, rowmax,
// tmax, exp, rowsum, [BR, 1] columns broadcast over [BR, BC] tiles.
@autotune(D in [32], BR in [16, 32], BC in [16, 32])
@grid(cdiv(NQ, BR))
kernel flash_attention(Q: tensor<f32>[NQ, D],
                       K: tensor<f32>[NK, D],
                       V: tensor<f32>[NK, D],
                       O: tensor<f32>[NQ, D],
                       scale: f32) {
  let row = program_id(0) * BR
  let q = Q[row :+ BR, :]
  var acc: tile<f32>[BR, D] = 0.0
  var m: tile<f32>[BR, 1] = -1.0e30
  var l: tile<f32>[BR, 1] = 0.0
  for kt in range(0, NK, BC) {
    let k = K[kt :+ BC, :]
    let v = V[kt :+ BC, :]
    var s: tile<f32>[BR, BC] = dot_t(q, k)
    s = s * scale
    var mnew: tile<f32>[BR, 1] = rowmax(s)
    mnew = tmax(m, mnew)
    var p: tile<f32>[BR, BC] = exp(s - mnew)
    var corr: tile<f32>[BR, 1] = exp(m - mnew)
    l = l * corr
    l += rowsum(p)
    acc = acc * corr
    acc += dot(p, v)
    m = mnew
  }
  acc = acc / l
  O[row :+ BR, :] = acc
}
