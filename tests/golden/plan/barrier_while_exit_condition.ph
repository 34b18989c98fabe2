// A while loop: the last condition check reads t after the last body; the
// write after the loop must wait for it.
@grid(1)
kernel wl(A: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  var t = A[:, :]
  while t[0, 0] > 0.0 {
    t = t - 1.0
  }
  t[0, :] = 1.0
  B[:, :] = t
}
