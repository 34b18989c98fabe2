// atomic_add (spec 9.6): CTAs add into the same elements, and every add
// counts, whatever order the CTAs run in.

// Each CTA adds the column sums of its 16 rows into C: C ends as its input
// plus the column sums of X (ragged: R and N are not multiples of the tile).
@grid(cdiv(N, 64), cdiv(R, 16))
kernel atomic_colsum(X: tensor<f32>[R, N], C: tensor<f32>[1, N]) {
  let x = X[ctx.block.y * 16 :+ 16, ctx.block.x * 64 :+ 64]
  atomic_add(C[0 :+ 1, ctx.block.x * 64 :+ 64], colsum(x))
}

// Split-K by atomics: CTA (x, y, z) adds the product of its 32-wide chunk
// of K into its [16, 16] block of C (a tensor-core result added element by
// element).
@grid(cdiv(M, 16), cdiv(N, 16), cdiv(K, 32))
kernel atomic_splitk(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N]) {
  let a = A[ctx.block.x * 16 :+ 16, ctx.block.z * 32 :+ 32]
  let b = B[ctx.block.z * 32 :+ 32, ctx.block.y * 16 :+ 16]
  atomic_add(C[ctx.block.x * 16 :+ 16, ctx.block.y * 16 :+ 16], dot(a, b))
}

// Scalars into one element, one type a tensor: CTA i adds i + 1 (and
// halves of it in f16 and f64), so each ends as its input plus G (G + 1) / 2
// (halved), exact in every type.
@grid(G)
kernel atomic_scalars(S: tensor<i32>[G], I: tensor<i32>[1], L: tensor<i64>[1], H: tensor<f16>[1], D: tensor<f64>[1]) {
  let i = ctx.block.x
  atomic_add(I[0], i + 1)
  atomic_add(L[0], i64(i + 1))
  atomic_add(H[0], f16(i + 1) * 0.5)
  atomic_add(D[0], f64(i + 1) * 0.5)
  S[i] = i
}

// barrier() (spec 10.6): each CTA stores its rows doubled, waits at the
// user's barrier, and reads them back shifted by one row within the block
// (a row another thread may have stored), then adds them into C.
@grid(cdiv(R, 8))
kernel barrier_rows(X: tensor<f32>[R, 32], Y: tensor<f32>[R, 32], C: tensor<f32>[1, 32]) {
  let r0 = ctx.block.x * 8
  Y[r0 :+ 8, :] = X[r0 :+ 8, :] * 2.0
  barrier()
  atomic_add(C[0 :+ 1, :], colsum(Y[r0 :+ 8, :]))
}

// atomic_add of an f32 tile four columns a thread (spec 9.6): on sm_90a each four
// columns a thread owns is added by one vector red where it lies whole in
// the tensor on a 16-byte boundary, lane by lane where it does not (an odd
// pitch puts every other row off the boundary; the last chunk of a ragged
// row is cut). R CTAs add the same halves of X, so C gains R X / 2 (P, of
// R elements, only gives the grid its R).
@launch(64)
@grid(cdiv(N, 256), R)
kernel atomic_rows(X: tensor<f32>[2, N], C: tensor<f32>[2, N], P: tensor<i32>[R]) {
  let c0 = ctx.block.x * 256
  var acc: tile<f32>[2, 256] = 0.0
  for k in range(0, 2, 1) {
    acc += X[0 :+ 2, c0 :+ 256] * 0.25
  }
  atomic_add(C[0 :+ 2, c0 :+ 256], acc)
}
