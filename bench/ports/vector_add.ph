// Ported from the shape of Triton's first tutorial (vector addition): a 1-D
// grid of programs, each adding one block of BS elements; the last block's
// slack past N is masked. Written as a Triton user would port it.
@autotune(BS in [1024, 4096])
@grid(cdiv(N, BS))
kernel add(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N]) {
  let i0 = program_id(0) * BS
  Z[i0 :+ BS] = X[i0 :+ BS] + Y[i0 :+ BS]
}
