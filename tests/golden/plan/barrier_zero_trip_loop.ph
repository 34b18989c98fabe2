// A loop that may run zero times: the read after it needs its own barrier.
@grid(1)
kernel zerotrip(A: tensor<f32>[8, 8], B: tensor<f32>[8, 8], n: i32) {
  var t = A[:, :]
  for i in range(0, n) {
    B[:, :] = t * 3.0
  }
  B[:, :] = t * 3.0
}
