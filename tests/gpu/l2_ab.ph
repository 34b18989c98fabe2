// tests/gpu/l2_ab.sh: bench/softmax.ph's kernels at the points that win over long rows (BR 1, 1024
// threads, where a row a CTA keeps the rows in flight within L2; BR 8 as the baseline's best)
@autotune(BR in [1], BN in [4096, 16384], NT in [1024])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel row_f32(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = -inf
  var l: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let cols = c0 + iota(BR, BN)
    let x = where(cols < N, X[r0 :+ BR, c0 :+ BN], -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = exp(X[r0 :+ BR, c0 :+ BN] - m) / l
  }
}

@autotune(BR in [8], BN in [1024], NT in [256])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel blk_f32(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = -inf
  var l: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let cols = c0 + iota(BR, BN)
    let x = where(cols < N, X[r0 :+ BR, c0 :+ BN], -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = exp(X[r0 :+ BR, c0 :+ BN] - m) / l
  }
}

@autotune(BR in [1], BN in [4096, 16384], NT in [1024])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel row_bf16(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N]) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = -inf
  var l: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let cols = c0 + iota(BR, BN)
    let x = where(cols < N, f32(X[r0 :+ BR, c0 :+ BN]), -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = bf16(exp(X[r0 :+ BR, c0 :+ BN] - m) / l)
  }
}

@autotune(BR in [8], BN in [1024], NT in [256])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel blk_bf16(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N]) {
  let r0 = ctx.block.x * BR
  var m: tile<f32>[BR, 1] = -inf
  var l: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let cols = c0 + iota(BR, BN)
    let x = where(cols < N, f32(X[r0 :+ BR, c0 :+ BN]), -inf)
    let mnew = tmax(m, rowmax(x))
    l = l * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = bf16(exp(X[r0 :+ BR, c0 :+ BN] - m) / l)
  }
}

