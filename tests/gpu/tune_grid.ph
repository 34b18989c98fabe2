// A kernel without @grid whose variants take different tiles (spec 11.1),
// for gpu_runtime.c: each variant must launch on its own derived grid,
// cdiv(N, BS), through autotuning and pinned. NC is a launch contract
// (spec 11.2): the host's Cnt must hold a counter a block.
@autotune(BS in [128, 1024])
@requires(NC >= cdiv(N, BS))
kernel tune_grid(X: tensor<f32>[N], Y: tensor<f32>[N], Cnt: tensor<i32>[NC]) {
  let i0 = program_id(0) * BS
  Y[i0 :+ BS] = X[i0 :+ BS] * 3.0 + 1.0
}
