@grid(1)
kernel k(X: tensor<i32>[N], Y: tensor<f32>[N]) {
  Y[0 :+ 64] = pow(X[0 :+ 64], 2.0)
}
