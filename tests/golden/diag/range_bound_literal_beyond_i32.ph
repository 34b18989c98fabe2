// Loop variables are i32: a literal bound past its range is an error.
kernel spin(A: tensor<f32>[N]) {
  for i in range(0, 5000000000) {
  }
}
