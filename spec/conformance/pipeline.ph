// @pipeline: each CTA walks down its 64 columns in [8, 64] tiles, the
// loads streamed through a ring of STAGES buffers by bulk copies on
// sm_90a, STAGES - 1 tiles ahead (Y = 2 X + 1). A tile the copy cannot take
// whole (the last rows when M is no multiple of 8, columns past N, a row
// pitch that is no multiple of 16 bytes) takes the pointer path in its
// iteration; the mbarrier phases must stay in step either way.
@autotune(STAGES in [2, 3, 4])
@pipeline(STAGES)
@launch(64)
@grid(cdiv(N, 64))
kernel pipe_copy(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let c0 = ctx.block.x * 64
  for r in range(0, M, 8) {
    Y[r :+ 8, c0 :+ 64] = X[r :+ 8, c0 :+ 64] * 2.0 + 1.0
  }
}

// The split-K Q8_0 matvec of examples/q8_matvec/q8_matvec_split.ph with its
// weight and scale tiles streamed through @pipeline rings (PIPE stages).
@autotune(TN in [512, 1024], PIPE in [2, 3, 4])
@launch(TN / 4)
@pipeline(PIPE)
@dynshared
@grid(cdiv(N, TN), KSPLIT)
kernel q8_split_pipe(A: tensor<f32>[1, K],
                     W: tensor<i8>[K, N],
                     S: tensor<f32>[KB, N],
                     P: tensor<f32>[KSPLIT, N]) {
  let pn = ctx.block.x
  let chunk = cdiv(K, KSPLIT * 32) * 32
  let k0 = ctx.block.y * chunk
  let k1 = min(K, k0 + chunk)
  var acc: tile<f32>[1, TN] = 0.0
  for k in range(k0, k1, 32) {
    let w = W[k :+ 32, pn * TN :+ TN]
    let s = S[k / 32 :+ 1, pn * TN :+ TN]
    let a = A[0 :+ 1, k :+ 32]
    var wf: tile<f32>[32, TN] = f32(w)
    var part: tile<f32>[1, TN] = dot(a, wf)
    acc += part * s
  }
  P[ctx.block.y :+ 1, pn * TN :+ TN] = acc
}


// A ringed loop with a loop inside: the outer load of each 16-row block
// takes the ring, the inner loop's loads stay plain (one streamed loop at
// a time): Y[r + i] = X[r + i] + X[16 (r / 16) + i mod 8].
@pipeline(3)
@launch(64)
@grid(cdiv(N, 64))
kernel pipe_nested(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let c0 = ctx.block.x * 64
  for r in range(0, M, 16) {
    let a = X[r :+ 8, c0 :+ 64]
    for q in range(0, 2) {
      Y[r + q * 8 :+ 8, c0 :+ 64] = X[r + q * 8 :+ 8, c0 :+ 64] + a
    }
  }
}

// The ringed loop inside an if: no producer warp (its loop is not at the
// top of the kernel), so warp 0 issues the copies between iterations.
@pipeline(3)
@launch(64)
@grid(cdiv(N, 64))
kernel pipe_copy_in_if(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let c0 = ctx.block.x * 64
  if c0 < N {
    for r in range(0, M, 8) {
      Y[r :+ 8, c0 :+ 64] = X[r :+ 8, c0 :+ 64] * 2.0 + 1.0
    }
  }
}
