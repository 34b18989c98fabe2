// Kernels without @grid (spec 11.1): each variant launches on the grid
// derived from its slices, cdiv(M, BR) x cdiv(N, BC) here, the rows taken
// in reverse order through ctx.grid.x. A variant launched on another
// variant's grid would leave elements unwritten (poisoned: the case fails)
// or write some twice (the interpreter fails it).
@autotune(BR in [8, 32], BC in [16, 64])
kernel derived_copy(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let r = (ctx.grid.x - 1 - ctx.block.x) * BR
  let c0 = program_id(1)
  let c = i64(c0) * BC
  Y[r :+ BR, c :+ BC] = X[r :+ BR, c :+ BC] * 2.0 + 1.0
}
