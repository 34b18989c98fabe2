// The everyday functions (spec 9): abs, sigmoid, rsqrt, erf and rowmin, each
// built from operations the backend has; rowmin over a ragged row whose slack
// is masked to inf.
@grid(R)
kernel everyday(X: tensor<f32>[R, N], A: tensor<f32>[R, N], S: tensor<f32>[R, N], Q: tensor<f32>[R, N],
                E: tensor<f32>[R, N], M: tensor<f32>[R, 1]) {
  let r = ctx.block.x
  let x = X[r :+ 1, 0 :+ 256]
  A[r :+ 1, 0 :+ 256] = abs(x)
  S[r :+ 1, 0 :+ 256] = sigmoid(x)
  Q[r :+ 1, 0 :+ 256] = rsqrt(abs(x) + 1.0)
  E[r :+ 1, 0 :+ 256] = erf(x)
  M[r :+ 1, 0 :+ 1] = rowmin(where(iota(1, 256) < N, x, inf))
}
