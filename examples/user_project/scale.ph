// A kernel a C program carries: Y = X * s over a vector.
@grid(cdiv(N, 256))
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N], s: f32) {
  let i = program_id(0) * 256
  Y[i :+ 256] = X[i :+ 256] * s
}
