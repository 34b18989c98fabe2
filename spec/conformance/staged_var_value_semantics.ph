// A let bound to a staged var keeps the value it read: writing the var later
// must not change it (the planner may not alias the read to the var's
// shared buffer while the var is rewritten).
@grid(1)
kernel staged_var_value_semantics(A: tensor<f32>[12, 8], B: tensor<f32>[12, 8]) {
  var t = A[0 :+ 12, 0 :+ 8]
  let u = t
  t = t * 2.0
  B[0 :+ 12, 0 :+ 8] = u + t
}
