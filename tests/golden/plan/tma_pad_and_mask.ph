// phobosc:
// TMA (the sm_90a default): the [BQ, 7, D] query tile (physical [BQ, 8, D]) is read through a
// map that views HQ as [HQ / 7, 7], so its slack lies past that dim's end;
// the [16, 64] tile without slack through a plain map; the tile under an if
// and the one with a start that is no multiple of its length stay on the
// pointer path.
@dynshared
@grid(cdiv(S, 16), HQ / 7, B)
kernel tma_paths(Q: tensor<f32>[B, S, HQ, 64], X: tensor<f32>[M, 64], R: tensor<f32>[B, S, HQ, 1],
                 P: tensor<f32>[B, S, HQ, 1], Y: tensor<f32>[M, 64], flag: bool) {
  let s0 = ctx.block.x * 16
  let h = ctx.block.y
  let b = ctx.block.z
  var q: tile<f32>[16, 7, 64] = Q[b, s0 :+ 16, h * 7 :+ 7, :]
  R[b, s0 :+ 16, h * 7 :+ 7, :] = rowsum(q)
  var x: tile<f32>[16, 64] = X[s0 :+ 16, :]
  var odd: tile<f32>[16, 7, 64] = Q[b, s0 :+ 16, h * 5 :+ 7, :]
  Y[s0 :+ 16, :] = x * 2.0
  P[b, s0 :+ 16, h * 5 :+ 7, :] = rowsum(odd)
  if flag {
    var z: tile<f32>[16, 64] = X[s0 :+ 16, :]
    Y[s0 :+ 16, :] = z
  }
}
