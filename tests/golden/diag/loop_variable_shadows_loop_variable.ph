kernel k(C: tensor<f32>[M, N]) {
  for i in range(0, 2) {
    for i in range(0, 2) {
      C[i :+ 1, 0 :+ 1] = 0.0
    }
  }
}
