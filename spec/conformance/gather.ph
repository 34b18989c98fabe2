// Points at run-time indices read from a tensor: Y[r] = X[r, Idx[r]], the
// gather of a cross-entropy's label logit. Idx is i64, as a user's labels
// are: a point outside [0, N) reads zero (spec 8), an i64 index past the
// i32 range included (the backend's coordinates are 32-bit; it saturates
// such an index, never wraps it into range: spec 15.6).
@grid(R)
kernel gather_i64(X: tensor<f32>[R, N], Idx: tensor<i64>[R], Y: tensor<f32>[R]) {
  let r = ctx.block.x
  Y[r] = X[r, Idx[r]]
}
