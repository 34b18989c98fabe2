// A dimension name longer than any fixed buffer, printed in a type in a
// diagnostic: the message carries the whole name.
@grid(1)
kernel k(X: tensor<f32>[Sssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss, 4], Y: tensor<f32>[4]) {
  Y[X] = 1.0
}
