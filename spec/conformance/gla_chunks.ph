// Gated linear attention in chunks, written from Phobos's description of
// cumsum, tril and transpose (the chunkwise form of its KDA example): the
// recurrence S_t = a_t S_{t-1} + k_t^T v_t, o_t = q_t S_t, with G = log a,
// computed C tokens at a time. b = cumsum(g) is the log of each token's
// decay from the chunk's start; the tokens within a chunk meet through a
// causal mask (tril), the chunks before through the carried state S.
// Past N the slices read zeros: a gate of 0 (a = 1) and empty keys and
// values, which change nothing.
@autotune(D in [16], C in [16])
@grid(1)
kernel gla_chunks(Q: tensor<f32>[N, D], K: tensor<f32>[N, D], V: tensor<f32>[N, D], G: tensor<f32>[N, 1],
                  O: tensor<f32>[N, D]) {
  var S: tile<f32>[D, D] = 0.0
  for t0 in range(0, N, C) {
    let q = Q[t0 :+ C, :]
    let k = K[t0 :+ C, :]
    let v = V[t0 :+ C, :]
    let g = G[t0 :+ C, :]
    let b = cumsum(g)                   // [C, 1]
    let last = rowsum(transpose(g))     // [1, 1]: the whole chunk's decay
    let qd = q * exp(b)
    let kd = k * exp(-b)
    let within = dot(tril(dot_t(qd, kd)), v)
    O[t0 :+ C, :] = within + dot(qd, S)
    S = S * exp(last) + dot(transpose(k * exp(last - b)), v)
  }
}
