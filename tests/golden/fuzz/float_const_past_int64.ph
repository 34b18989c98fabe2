// Fuzzer finding (run 1): lowering stored every float constant's integer
// value with a plain (int64_t) cast, undefined for 1e30 (UBSan:
// "1e+30 is outside the range of representable values of type 'long'").
// Lowering now saturates; this must compile to PTX (exit 0) without a report.
@grid(1)
kernel big(A: tensor<f64>[8], B: tensor<f64>[8]) {
  let t = A[:]
  B[:] = t * 1e30 - 1e300 + -1e300
}
