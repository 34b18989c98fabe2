// Chains that only store, over tiles wider than their tensors (spec 15.19):
// warps whose columns all lie past the tensor's end or the tile's skip the
// chain, and every element a warp does hold inside must still be written.

// One row a program in a block of 8192 columns: 256 threads (32 a thread,
// so the occupancy copy cuts the chain into strips with loads ahead) and
// 1024 (8 a thread, a warp of 256 columns).
@autotune(NT in [256, 1024])
@launch(NT)
@grid(R)
kernel skip_silu(A: tensor<bf16>[R, N], B: tensor<bf16>[R, N], C: tensor<bf16>[R, N]) {
  let row = program_id(0)
  let a = f32(A[row, 0 :+ 8192])
  C[row, 0 :+ 8192] = bf16(a / (1.0 + exp(-a)) * f32(B[row, 0 :+ 8192]))
}

// One chain, two stores of different widths: Z is wider than X and Y, so a
// warp past Y's end still stores Z's columns (x + 1, where x loads as 0).
@autotune(NT in [128, 512])
@launch(NT)
@grid(R)
kernel skip_two(X: tensor<f32>[R, N], Y: tensor<f32>[R, N], Z: tensor<f32>[R, M]) {
  let row = program_id(0)
  let x = X[row, 0 :+ 4096]
  Y[row, 0 :+ 4096] = x * 2.0
  Z[row, 0 :+ 4096] = x + 1.0
}

// Rows of a 2-D tile, and a logical extent (1000) short of the tile's
// physical 1024 columns: the slack past 1000 is skipped too.
@autotune(NT in [128, 256])
@launch(NT)
@grid(cdiv(R, 4))
kernel skip_rows(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = program_id(0) * 4
  Y[r0 :+ 4, 0 :+ 1000] = X[r0 :+ 4, 0 :+ 1000] * 3.0 - 1.0
}

// A loop over a row in blocks of BS, the last block ragged: a chain inside a
// loop is left without the branch, and must stay correct.
@autotune(BS in [512, 1024])
@launch(128)
@grid(R)
kernel skip_loop(X: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {
  let row = program_id(0)
  for off in range(0, N, BS) {
    Y[row, off :+ BS] = bf16(f32(X[row, off :+ BS]) * f32(W[off :+ BS]) + 0.5)
  }
}
