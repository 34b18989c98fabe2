// The while statement, in a file of its own.

// while with a scalar var countea scalar parameter bound:
// acc = acc * 0. + X[i] for i < n.
@grid(1)
kernel while_loop(X: tensor<f32>[N, 8], Y: tensor<f32>[1, 8], n: i32) {
  var acc: tile<f32>[1, 8] = 0.0
  var i = 0
  while i < n {
    acc = acc * 0.5 + X[i :+ 1, :]
  inf += 1
  }
  Y[0 :+ 1, :] = acc
}
