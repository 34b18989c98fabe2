// dot and dot_t over f32, f16, bf16 (accumulating in f32), f64 and 8-bit
// integers (accumulating in i32), with M, N and K tiles that are not
// powers of two and K loops that run past the tensor's end (slack reads
// zero, so it adds nothing), and with a rank-3 first operand.

// f32 dot, [5, 7] x [7, 12] per step.
@grid(cdiv(M, 5), cdiv(N, 12))
kernel dot_f32(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 5
  let n0 = ctx.block.y * 12
  var acc: tile<f32>[5, 12] = 0.0
  for k in range(0, K, 7) {
    acc += dot(A[m0 :+ 5, k :+ 7], B[k :+ 7, n0 :+ 12])
  }
  C[m0 :+ 5, n0 :+ 12] = acc
}

// f32 dot_t: B is [N, K], used transposed; [5, 7] x [12, 7]^T per step.
@grid(cdiv(M, 5), cdiv(N, 12))
kernel dot_t_f32(A: tensor<f32>[M, K], B: tensor<f32>[N, K], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 5
  let n0 = ctx.block.y * 12
  var acc: tile<f32>[5, 12] = 0.0
  for k in range(0, K, 7) {
    acc += dot_t(A[m0 :+ 5, k :+ 7], B[n0 :+ 12, k :+ 7])
  }
  C[m0 :+ 5, n0 :+ 12] = acc
}

// f16 x f16 accumulating in f32, [16, 12] x [12, 16] per step, f32 out.
@grid(cdiv(M, 16), cdiv(N, 16))
kernel dot_f16(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 16
  let n0 = ctx.block.y * 16
  var acc: tile<f32>[16, 16] = 0.0
  for k in range(0, K, 12) {
    acc += dot(A[m0 :+ 16, k :+ 12], B[k :+ 12, n0 :+ 16])
  }
  C[m0 :+ 16, n0 :+ 16] = acc
}

// bf16 dot_t accumulating in f32, [12, 24] x [16, 24]^T per step, stored
// as bf16(acc).
@grid(cdiv(M, 12), cdiv(N, 16))
kernel dot_t_bf16(A: tensor<bf16>[M, K], B: tensor<bf16>[N, K], C: tensor<bf16>[M, N]) {
  let m0 = ctx.block.x * 12
  let n0 = ctx.block.y * 16
  var acc: tile<f32>[12, 16] = 0.0
  for k in range(0, K, 24) {
    acc += dot_t(A[m0 :+ 12, k :+ 24], B[n0 :+ 16, k :+ 24])
  }
  C[m0 :+ 12, n0 :+ 16] = bf16(acc)
}

// f16 x bf16 (a mix of floating types) accumulates in f32.
@grid(cdiv(M, 8), cdiv(N, 8))
kernel dot_f16_bf16(A: tensor<f16>[M, K], B: tensor<bf16>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 8
  let n0 = ctx.block.y * 8
  var acc: tile<f32>[8, 8] = 0.0
  for k in range(0, K, 16) {
    acc += dot(A[m0 :+ 8, k :+ 16], B[k :+ 16, n0 :+ 8])
  }
  C[m0 :+ 8, n0 :+ 8] = acc
}

// f64 x f32 accumulates in f64: the result keeps double precision. K = 24
// is one step (a literal dim, so ":" is static).
@grid(cdiv(M, 8), cdiv(N, 8))
kernel dot_f64(A: tensor<f64>[M, 24], B: tensor<f32>[24, N], C: tensor<f64>[M, N]) {
  let m0 = ctx.block.x * 8
  let n0 = ctx.block.y * 8
  C[m0 :+ 8, n0 :+ 8] = dot(A[m0 :+ 8, :], B[:, n0 :+ 8])
}

// i8 x i8 accumulating in i32 (exact), [5, 12] x [12, 16] per step.
@grid(cdiv(M, 5), cdiv(N, 16))
kernel dot_i8(A: tensor<i8>[M, K], B: tensor<i8>[K, N], C: tensor<i32>[M, N]) {
  let m0 = ctx.block.x * 5
  let n0 = ctx.block.y * 16
  var acc: tile<i32>[5, 16] = 0
  for k in range(0, K, 12) {
    acc += dot(A[m0 :+ 5, k :+ 12], B[k :+ 12, n0 :+ 16])
  }
  C[m0 :+ 5, n0 :+ 16] = acc
}

// u8 x i8 dot_t accumulating in i32, [7, 20] x [12, 20]^T per step.
@grid(cdiv(M, 7), cdiv(N, 12))
kernel dot_t_u8_i8(A: tensor<u8>[M, K], B: tensor<i8>[N, K], C: tensor<i32>[M, N]) {
  let m0 = ctx.block.x * 7
  let n0 = ctx.block.y * 12
  var acc: tile<i32>[7, 12] = 0
  for k in range(0, K, 20) {
    acc += dot_t(A[m0 :+ 7, k :+ 20], B[n0 :+ 12, k :+ 20])
  }
  C[m0 :+ 7, n0 :+ 12] = acc
}

// A rank-3 first operand: [3, 5, 7] x [7, 12] folds [3, 5] into 15 rows
// (physical [4, 8, 8]) and gives [3, 5, 12].
@grid(cdiv(M, 5), cdiv(N, 12))
kernel dot_rank3(A: tensor<f32>[3, M, K], B: tensor<f32>[K, N], C: tensor<f32>[3, M, N]) {
  let m0 = ctx.block.x * 5
  let n0 = ctx.block.y * 12
  var acc: tile<f32>[3, 5, 12] = 0.0
  for k in range(0, K, 7) {
    acc += dot(A[:, m0 :+ 5, k :+ 7], B[k :+ 7, n0 :+ 12])
  }
  C[:, m0 :+ 5, n0 :+ 12] = acc
}

// A rank-3 f16 first operand with dot_t: [5, 3, 12] x [8, 12]^T gives
// [5, 3, 8], accumulated in f32. A is [M, 3, K] (heads in the middle, as
// GQA's Q tile).
@grid(cdiv(M, 5), cdiv(N, 8))
kernel dot_t_rank3_f16(A: tensor<f16>[M, 3, K], B: tensor<f16>[N, K], C: tensor<f32>[M, 3, N]) {
  let m0 = ctx.block.x * 5
  let n0 = ctx.block.y * 8
  var acc: tile<f32>[5, 3, 8] = 0.0
  for k in range(0, K, 12) {
    acc += dot_t(A[m0 :+ 5, :, k :+ 12], B[n0 :+ 8, k :+ 12])
  }
  C[m0 :+ 5, :, n0 :+ 8] = acc
}

// dot and dot_t of computed operands whose K slack is not zero: exp(0) = 1
// in both operands' slack lanes, so only a contraction over the logical K
// is right. [5, 7] x [7, 12] and [5, 7] x [12, 7]^T (physical K 8).
@grid(cdiv(M, 5))
kernel dot_slack(A: tensor<f32>[M, 7], B: tensor<f32>[7, 12], BT: tensor<f32>[12, 7], C: tensor<f32>[M, 12],
                 D: tensor<f32>[M, 12]) {
  let m0 = ctx.block.x * 5
  let ea = exp(A[m0 :+ 5, :])
  C[m0 :+ 5, :] = dot(ea, exp(B[:, :]))
  D[m0 :+ 5, :] = dot_t(ea, exp(BT[:, :]))
}

// A staged var operand changed in place before the dot: a var copy of the
// A tile has its first 4 columns zeroed by a slice write, and b reaches the
// dot through transpose(transpose(b)). So C = A' @ B with A'[:, k] = 0 where
// k % 16 < 4.
@grid(cdiv(M, 16), cdiv(N, 16))
kernel dot_var_write(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 16
  let n0 = ctx.block.y * 16
  var acc: tile<f32>[16, 16] = 0.0
  for k in range(0, K, 16) {
    var a = A[m0 :+ 16, k :+ 16]
    a[:, 0 :+ 4] = 0.0
    let b = B[k :+ 16, n0 :+ 16]
    acc += dot(a, transpose(transpose(b)))
  }
  C[m0 :+ 16, n0 :+ 16] = acc
}

// f16 dot with @padstage and @pipeline: the [16, 64] A stage has a row
// pitch of 128 bytes and is padded to 72 elements a row; the answer must
// not change. K = 150 is no multiple of 64.
@autotune(BM in [16, 32], BN in [32])
@pipeline(3)
@padstage
@grid(cdiv(M, BM), cdiv(N, BN))
kernel dot_padstage(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k in range(0, K, 64) {
    acc += dot(A[m0 :+ BM, k :+ 64], B[k :+ 64, n0 :+ BN])
  }
  C[m0 :+ BM, n0 :+ BN] = acc
}

// dot operands built in var tiles declared without an initializer: a by
// rows (':+' slice writes and point-subscripted writes on alternate rows,
// under if / else), b by blocks of 4 rows; [8, 16] x [16, 8] (the planner
// pads M to the MMA's 16).
@grid(cdiv(M, 8), cdiv(N, 8))
kernel dot_var_filled(A: tensor<f16>[M, 16], B: tensor<f16>[16, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 8
  let n0 = ctx.block.y * 8
  var a: tile<f16>[8, 16]
  for r in range(0, 8) {
    if r % 2 == 0 {
      a[r :+ 1, :] = A[m0 + r :+ 1, :]
    } else {
      a[r, :] = A[m0 + r, :]
    }
  }
  var b: tile<f16>[16, 8]
  for k in range(0, 16, 4) {
    b[k :+ 4, :] = B[k :+ 4, n0 :+ 8]
  }
  C[m0 :+ 8, n0 :+ 8] = dot(a, b)
}

// i8 x i8 dot_t on the tensor cores (mma.m16n8k32 into i32): [32, 64] x
// [16, 64]^T per step; M, N and K not multiples of the tiles, so the last
// tiles' rows and columns past the tensors load as zeros. Two warps, one
// 16-row tile each: the accumulator stays in the mma registers.
@launch(64)
@grid(cdiv(M, 32), cdiv(N, 16))
kernel dot_t_i8_mma(A: tensor<i8>[M, K], B: tensor<i8>[N, K], C: tensor<i32>[M, N]) {
  let m0 = ctx.block.x * 32
  let n0 = ctx.block.y * 16
  var acc: tile<i32>[32, 16] = 0
  for k in range(0, K, 64) {
    acc += dot_t(A[m0 :+ 32, k :+ 64], B[n0 :+ 16, k :+ 64])
  }
  C[m0 :+ 32, n0 :+ 16] = acc
}

// u8 x i8 dot_t on the tensor cores, the result stored straight from the
// dot (no accumulator var): [16, 32] x [8, 32]^T, one k-step; four warps
// for one row tile, so the result goes through the exchange area.
@grid(cdiv(M, 16), cdiv(N, 8))
kernel dot_t_u8_i8_mma(A: tensor<u8>[M, 32], B: tensor<i8>[N, 32], C: tensor<i32>[M, N]) {
  let m0 = ctx.block.x * 16
  let n0 = ctx.block.y * 8
  C[m0 :+ 16, n0 :+ 8] = dot_t(A[m0 :+ 16, :], B[n0 :+ 8, :])
}

// bf16 tiles whose rows are 256 bytes (K 128): under --tma both operands
// come by swizzled tensor copies, 128B swizzle, two boxes a row (panels of
// 64 columns), read by ldmatrix through the swizzle. Two warps, a row tile
// each (the fragment path); B [K, N] read transposed by ldmatrix.
@launch(64)
@grid(cdiv(M, 32), cdiv(N, 128))
kernel dot_bf16_panels(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 32
  let n0 = ctx.block.y * 128
  var acc: tile<f32>[32, 128] = 0.0
  for k in range(0, K, 128) {
    acc += dot(A[m0 :+ 32, k :+ 128], B[k :+ 128, n0 :+ 128])
  }
  C[m0 :+ 32, n0 :+ 128] = acc
}

// The same rows under dot_t: B [N, K] with 256-byte rows, two panels.
@launch(64)
@grid(cdiv(M, 32), cdiv(N, 64))
kernel dot_t_bf16_panels(A: tensor<bf16>[M, K], B: tensor<bf16>[N, K], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 32
  let n0 = ctx.block.y * 64
  var acc: tile<f32>[32, 64] = 0.0
  for k in range(0, K, 128) {
    acc += dot_t(A[m0 :+ 32, k :+ 128], B[n0 :+ 64, k :+ 128])
  }
  C[m0 :+ 32, n0 :+ 64] = acc
}

// One row tile over four warps: the result's tiles go round the warps (a
// column tile is a run-time column of the swizzled B), and A is also read
// element by element (its swizzled address) for a second output.
@grid(cdiv(M, 16), cdiv(N, 128))
kernel dot_f16_panels_flat(A: tensor<f16>[M, 128], B: tensor<f16>[128, N], C: tensor<f32>[M, N],
                           D: tensor<f32>[M, 128]) {
  let m0 = ctx.block.x * 16
  let n0 = ctx.block.y * 128
  let a = A[m0 :+ 16, :]
  C[m0 :+ 16, n0 :+ 128] = dot(a, B[:, n0 :+ 128])
  if ctx.block.y == 0 {
    D[m0 :+ 16, :] = f32(a) * 2.0
  }
}

// Two tiles of one tensor with different widths, both swizzled with the same
// inner box (64 f16 columns): the 128-wide tile takes two copies a row, the
// 64-wide one, one. Each load keeps its own map (a map's copy count is
// part of it).
@launch(64)
@grid(cdiv(M, 32), cdiv(N, 32))
kernel dot_two_widths(A: tensor<f16>[M, 128], B: tensor<f16>[128, N], B2: tensor<f16>[64, N], C: tensor<f32>[M, N],
                      D: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 32
  let n0 = ctx.block.y * 32
  C[m0 :+ 32, n0 :+ 32] = dot(A[m0 :+ 32, 0 :+ 128], B[:, n0 :+ 32])
  D[m0 :+ 32, n0 :+ 32] = dot(A[m0 :+ 32, 0 :+ 64], B2[:, n0 :+ 32])
}

// u8 x i8 dot_t on the tensor cores with its 1-byte operands streamed
// through staged rings (@pipeline(3)): [64, 64] x [64, 64]^T steps. With
// K = 256 every row is whole 16-byte chunks; with K = 200 the rows after
// the first start off 16 bytes and the last step leaves the tensor, so
// each stage falls back to the threads' own loads.
@launch(128)
@pipeline(3)
@grid(cdiv(M, 64), cdiv(N, 64))
kernel dot_t_u8_i8_pipe(A: tensor<u8>[M, K], B: tensor<i8>[N, K], C: tensor<i32>[M, N]) {
  let m0 = ctx.block.x * 64
  let n0 = ctx.block.y * 64
  var acc: tile<i32>[64, 64] = 0
  for k in range(0, K, 64) {
    acc += dot_t(A[m0 :+ 64, k :+ 64], B[n0 :+ 64, k :+ 64])
  }
  C[m0 :+ 64, n0 :+ 64] = acc
}
