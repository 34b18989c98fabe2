/* llm_decode_host.c: the decode step of a Qwen2-7B-shaped transformer in
 * Q8_0 (28 layers, hidden 3584, 28 query heads over 4 KV heads of 128, MLP
 * 18944 with SiLU gating, vocabulary 152064), every kernel a phobos kernel
 * (llm_decode.ph) launched through libphobos, the step captured once into
 * a CUDA graph and replayed token after token.
 *
 *   llm_decode_host [options] [DIR]     DIR holds llm_decode.cubin (and .yaml)
 *     --batch B        sequences decoded together (1 to 4; default 1)
 *     --ctx P          the prompt already in the caches: decoding starts
 *                      at position P (default 4096)
 *     --tokens N       tokens timed (default 64)
 *     --check K        steps checked against the double reference (default 2)
 *     --layers L       layers (default 28; fewer for a quick run)
 *     --min-keys K     the fewest keys of the prompt an attention split takes
 *                      (default 64; attn_splits)
 *   LLM_PROFILE_STEP=1 brackets the kernel-by-kernel step with
 *                      cuProfilerStart/Stop (ncu --profile-from-start off)
 *
 * The weights are random (no model can be downloaded here) but held as an
 * engine holds Q8_0 (README.md in this folder: the layout, and the
 * conversion from GGUF's block_q8_0); the scales keep a unit-RMS input at
 * unit RMS through each projection. The caches hold P random positions (a
 * prefilled prompt), the tokens are random.
 *
 * The check: before each of the first K steps the host reads back the
 * state (tokens, positions, caches), computes the step in double (the same
 * math: Q8_0 weights, f32 activations, the caches' bf16 values), runs the
 * graph, and compares the logits (max |diff| / max |ref| under 2e-2) and the
 * greedy tokens (equal, or a near tie the tolerance cannot order).
 *
 * The timing: N replays of the graph between CUDA events (tokens/s = B N /
 * time), then one step launched kernel by kernel with an event after each
 * (time per kernel, summed by kernel), and the roof: the step's bytes (the
 * Q8_0 weights and scales, the caches read and the keys and values written,
 * the activations; of the embedding table only the B rows read) over the
 * bandwidth read_roof reads the weights at in the same run; a device copy of
 * half of them is printed beside it. */
#include <cuda.h>
#include <cudaProfiler.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host_common.h"

enum { HID = 3584, HQ = 28, HKV = 4, HD = 128, FF = 18944, VOCAB = 152064 };
enum { NH = HQ + 2 * HKV, NQKV = NH * HD, HB = HID / 32 };
static const double EPS = 1e-6, THETA = 1e6;

typedef struct Q8 { /* a Q8_0 weight W [K, N] and its scales S [K / 32, N], in the arena */
  int64_t K, N;
  CUdeviceptr w, s;
  uint64_t seed;
  float scale; /* the scales' value (all equal: the random int8s carry the variety) */
} Q8;

typedef struct Layer {
  Q8 qkv, o, gu, down;
  CUdeviceptr bias, g1, g2; /* f32 [NQKV], [HID], [HID] */
  CUdeviceptr kc, vc;       /* bf16 [B, TC, HKV, HD] */
} Layer;

typedef struct Model {
  int L, B;
  int64_t TC; /* the caches' capacity */
  int64_t NS; /* attention's key splits (attn_splits) */
  Layer *layer;
  CUdeviceptr emb, embs, gf; /* E [V, HB, 32] i8, ES [V, HB, 1] f32, gf [HID] */
  Q8 lm;
  CUdeviceptr arena;
  size_t arena_bytes, weight_bytes;
  CUdeviceptr x, y, qkv, qr, o, gu, hh, logits, tok, pos, rot, roof_out;
  CUdeviceptr op, lse; /* attention's partials: f32 [B, 1, HQ, NS, HD], [B, 1, HQ, NS] */
  phobos_kernel *embed, *norm, *gemv, *gemv_add, *rope, *split, *merge, *silu, *argmax, *roof;
  CUstream stream;
} Model;

/* ---------------------------------------------------------- random data */

static uint64_t mix(uint64_t z) { /* splitmix64 */
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* n int8 weights from `seed`, uniform in [-127, 127]: the same bytes each
 * time, so the reference regenerates a weight instead of keeping 8 GB */
static void gen_i8(int8_t *out, size_t n, uint64_t seed) {
  uint64_t s = mix(seed);
  for (size_t i = 0; i < n; i += 8) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint64_t v = s;
    for (size_t j = 0; j < 8 && i + j < n; j++, v >>= 8) out[i + j] = (int8_t)((int)(v & 0xff) % 255 - 127);
  }
}

/* ------------------------------------------------------------- set-up */

static size_t arena_take(Model *m, size_t bytes) { /* 256-byte aligned offsets */
  size_t at = m->arena_bytes;
  m->arena_bytes += (bytes + 255) / 256 * 256;
  return at;
}

static void q8_plan(Model *m, Q8 *q, int64_t K, int64_t N, uint64_t seed, size_t *offs) {
  q->K = K, q->N = N, q->seed = seed;
  q->scale = (float)(1.0 / (73.3 * sqrt((double)K))); /* uniform int8's RMS is 73.3 */
  offs[0] = arena_take(m, (size_t)(K * N));
  offs[1] = arena_take(m, sizeof(float) * (size_t)(K / 32 * N));
}

static void upload_f32(CUdeviceptr d, size_t n, float v) {
  float *h = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) h[i] = v;
  CK(cuMemcpyHtoD(d, h, sizeof(float) * n));
  free(h);
}

static void q8_upload(Q8 *q, int8_t *buf) {
  gen_i8(buf, (size_t)(q->K * q->N), q->seed);
  CK(cuMemcpyHtoD(q->w, buf, (size_t)(q->K * q->N)));
  upload_f32(q->s, (size_t)(q->K / 32 * q->N), q->scale);
}

static CUdeviceptr dalloc(size_t bytes) {
  CUdeviceptr p;
  CK(cuMemAlloc(&p, bytes));
  CK(cuMemsetD8(p, 0, bytes));
  return p;
}

/* Attention's key splits: gqa_split_len's CTAs are one warp each, about
 * three resident an SM (a 70 KB ring each), so enough splits that the HKV B
 * heads fill the SMs three times over, but none of fewer than 64 keys at
 * the prompt's length P (a split without keys still costs its launch and
 * a partial the merge reads; --min-keys sets that floor). B 1 at context
 * 4096 takes 64 splits, at 32768 99 (132 SMs); B 4 at 4096 25. */
static int64_t attn_min_keys = 64;

static int64_t attn_splits(int B, int64_t P) {
  CUdevice dev;
  int sms = 0;
  CK(cuCtxGetDevice(&dev));
  CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  int64_t fill = (3 * (int64_t)sms + HKV * B - 1) / (HKV * B), keys = P / attn_min_keys;
  int64_t ns = fill < keys ? fill : keys;
  return ns < 1 ? 1 : ns;
}

static void model_make(Model *m, int L, int B, int64_t P, int64_t tokens) {
  m->L = L, m->B = B, m->TC = P + tokens + 64, m->NS = attn_splits(B, P);
  m->layer = calloc((size_t)L, sizeof(Layer));
  /* one arena for every weight: read_roof reads exactly these bytes */
  size_t (*offs)[4][2] = calloc((size_t)L + 1, sizeof *offs);
  m->arena_bytes = 0;
  for (int l = 0; l < L; l++) {
    Layer *y = &m->layer[l];
    q8_plan(m, &y->qkv, HID, NQKV, 1000 + 4 * l, offs[l][0]);
    q8_plan(m, &y->o, HQ * HD, HID, 1001 + 4 * l, offs[l][1]);
    q8_plan(m, &y->gu, HID, 2 * FF, 1002 + 4 * l, offs[l][2]);
    q8_plan(m, &y->down, FF, HID, 1003 + 4 * l, offs[l][3]);
  }
  q8_plan(m, &m->lm, HID, VOCAB, 7, offs[L][0]);
  size_t emb_off = arena_take(m, (size_t)VOCAB * HID), embs_off = arena_take(m, sizeof(float) * (size_t)VOCAB * HB);
  m->weight_bytes = m->arena_bytes;
  m->arena_bytes = (m->arena_bytes + 4096 * 256 - 1) / (4096 * 256) * (4096 * 256); /* whole read_roof blocks */
  CK(cuMemAlloc(&m->arena, m->arena_bytes));
  CK(cuMemsetD8(m->arena, 0, m->arena_bytes));
  for (int l = 0; l <= L; l++)
    for (int j = 0; j < (l < L ? 4 : 1); j++) {
      Q8 *q = l < L ? (Q8 *[]){&m->layer[l].qkv, &m->layer[l].o, &m->layer[l].gu, &m->layer[l].down}[j] : &m->lm;
      q->w = m->arena + offs[l][j][0], q->s = m->arena + offs[l][j][1];
    }
  m->emb = m->arena + emb_off, m->embs = m->arena + embs_off;
  free(offs);
  int8_t *buf = malloc((size_t)VOCAB * HID);
  for (int l = 0; l < L; l++) {
    Layer *y = &m->layer[l];
    q8_upload(&y->qkv, buf), q8_upload(&y->o, buf), q8_upload(&y->gu, buf), q8_upload(&y->down, buf);
    float *h = malloc(sizeof(float) * NQKV);
    for (int i = 0; i < NQKV; i++) h[i] = (float)(0.1 * normal());
    y->bias = dalloc(sizeof(float) * NQKV);
    CK(cuMemcpyHtoD(y->bias, h, sizeof(float) * NQKV));
    free(h);
    y->g1 = dalloc(sizeof(float) * HID), y->g2 = dalloc(sizeof(float) * HID);
    upload_f32(y->g1, HID, 1.0f), upload_f32(y->g2, HID, 1.0f);
  }
  q8_upload(&m->lm, buf);
  gen_i8(buf, (size_t)VOCAB * HID, 5);
  CK(cuMemcpyHtoD(m->emb, buf, (size_t)VOCAB * HID));
  upload_f32(m->embs, (size_t)VOCAB * HB, 1.0f / 73.3f);
  free(buf);
  m->gf = dalloc(sizeof(float) * HID);
  upload_f32(m->gf, HID, 1.0f);
  m->weight_bytes += sizeof(float) * ((size_t)L * (NQKV + 2 * HID) + HID); /* biases and norm weights, outside the arena */
  /* the caches: P random positions a sequence, from one random block of
   * bf16 values copied across (the check reads back whatever is there) */
  size_t cache_elems = (size_t)B * (size_t)m->TC * HKV * HD, block = (size_t)1 << 24;
  uint16_t *hb = malloc(sizeof(uint16_t) * block);
  for (size_t i = 0; i < block; i++) hb[i] = to_bf16((float)normal());
  CUdeviceptr dblock = dalloc(sizeof(uint16_t) * block);
  CK(cuMemcpyHtoD(dblock, hb, sizeof(uint16_t) * block));
  free(hb);
  size_t chunk = block / 2; /* each chunk of a cache from its own offset into the block */
  for (int l = 0; l < L; l++)
    for (int kv = 0; kv < 2; kv++) {
      CUdeviceptr c = dalloc(sizeof(uint16_t) * cache_elems);
      for (size_t at = 0, i = 0; at < cache_elems; at += chunk, i++) {
        size_t from = (size_t)mix((uint64_t)(l * 2 + kv) << 32 | i) % (block - chunk);
        CK(cuMemcpyDtoD(c + 2 * at, dblock + 2 * from, 2 * (cache_elems - at < chunk ? cache_elems - at : chunk)));
      }
      *(kv ? &m->layer[l].vc : &m->layer[l].kc) = c;
    }
  CK(cuMemFree(dblock));
  m->x = dalloc(sizeof(float) * (size_t)B * HID), m->y = dalloc(sizeof(float) * (size_t)B * HID);
  m->qkv = dalloc(sizeof(float) * (size_t)B * NQKV), m->qr = dalloc(sizeof(float) * (size_t)B * HQ * HD);
  m->op = dalloc(sizeof(float) * (size_t)(B * HQ * m->NS * HD)), m->lse = dalloc(sizeof(float) * (size_t)(B * HQ * m->NS));
  m->o = dalloc(sizeof(float) * (size_t)B * HQ * HD), m->gu = dalloc(sizeof(float) * (size_t)B * 2 * FF);
  m->hh = dalloc(sizeof(float) * (size_t)B * FF), m->logits = dalloc(sizeof(float) * (size_t)B * VOCAB);
  m->tok = dalloc(sizeof(int32_t) * (size_t)B), m->pos = dalloc(sizeof(int32_t) * (size_t)B);
  int32_t tok[4], pos[4];
  for (int b = 0; b < B; b++) tok[b] = (int32_t)(uniform() * VOCAB), pos[b] = (int32_t)P;
  CK(cuMemcpyHtoD(m->tok, tok, sizeof(int32_t) * (size_t)B));
  CK(cuMemcpyHtoD(m->pos, pos, sizeof(int32_t) * (size_t)B));
  /* RoPE's table: cos and sin of pos / theta^(2i / D) */
  float *rot = malloc(sizeof(float) * (size_t)m->TC * HD);
  for (int64_t p = 0; p < m->TC; p++)
    for (int i = 0; i < HD / 2; i++) {
      double a = (double)p * pow(THETA, -2.0 * i / HD);
      rot[(p * 2 + 0) * (HD / 2) + i] = (float)cos(a), rot[(p * 2 + 1) * (HD / 2) + i] = (float)sin(a);
    }
  m->rot = dalloc(sizeof(float) * (size_t)m->TC * HD);
  CK(cuMemcpyHtoD(m->rot, rot, sizeof(float) * (size_t)m->TC * HD));
  free(rot);
  m->roof_out = dalloc(sizeof(int32_t) * (m->arena_bytes / (4096 * 256) + 1));
  CK(cuStreamCreate(&m->stream, CU_STREAM_NON_BLOCKING));
  /* the memsets and copies above ran on the legacy stream, which the
   * non-blocking stream does not wait for */
  CK(cuCtxSynchronize());
}

/* --------------------------------------------------------------- step */

static phobos_arg T(CUdeviceptr p, phobos_dtype t, int rank, const int64_t *shape) { return phobos_tensor_arg(p, t, rank, shape); }

/* the step's launches by name, and (when step_events is set) an event
 * recorded after each, for the time per kernel */
enum { MAX_LAUNCHES = 512 };
static int nlaunched;
static const char *launched[MAX_LAUNCHES];
static CUevent *step_events;

static void launch(Model *m, phobos_kernel *k, const char *what, phobos_arg *a, int n) {
  PK(phobos_launch(k, a, n, m->stream));
  if (nlaunched < MAX_LAUNCHES) {
    launched[nlaunched] = what;
    if (step_events) CK(cuEventRecord(step_events[nlaunched + 1], m->stream));
  }
  nlaunched++;
}

static void gemv(Model *m, const Q8 *q, CUdeviceptr a, CUdeviceptr c, bool add, const char *what) {
  int64_t B = m->B;
  phobos_arg g[4] = {T(a, PHOBOS_F32, 2, (int64_t[]){B, q->K}), T(q->w, PHOBOS_I8, 2, (int64_t[]){q->K, q->N}),
                     T(q->s, PHOBOS_F32, 2, (int64_t[]){q->K / 32, q->N}), T(c, PHOBOS_F32, 2, (int64_t[]){B, q->N})};
  launch(m, add ? m->gemv_add : m->gemv, what, g, 4);
}

static void norm(Model *m, CUdeviceptr g) {
  int64_t B = m->B;
  phobos_arg a[4] = {T(m->x, PHOBOS_F32, 2, (int64_t[]){B, HID}), T(g, PHOBOS_F32, 2, (int64_t[]){1, HID}),
                     T(m->y, PHOBOS_F32, 2, (int64_t[]){B, HID}), phobos_float_arg(EPS)};
  launch(m, m->norm, "rmsnorm", a, 4);
}

/* One decode step: the tokens in TOK at the positions in POS in, the next
 * tokens in TOK and the positions moved on out; the logits in m->logits. */
static void step(Model *m) {
  int64_t B = m->B, TC = m->TC, NS = m->NS;
  phobos_arg e[4] = {T(m->tok, PHOBOS_I32, 1, (int64_t[]){B}), T(m->emb, PHOBOS_I8, 3, (int64_t[]){VOCAB, HB, 32}),
                     T(m->embs, PHOBOS_F32, 3, (int64_t[]){VOCAB, HB, 1}), T(m->x, PHOBOS_F32, 3, (int64_t[]){B, HB, 32})};
  launch(m, m->embed, "embed_q8", e, 4);
  for (int l = 0; l < m->L; l++) {
    Layer *y = &m->layer[l];
    norm(m, y->g1);
    gemv(m, &y->qkv, m->y, m->qkv, false, "q8_gemv qkv");
    phobos_arg r[7] = {T(m->qkv, PHOBOS_F32, 3, (int64_t[]){B, NH, HD}), T(y->bias, PHOBOS_F32, 3, (int64_t[]){1, NH, HD}),
                       T(m->pos, PHOBOS_I32, 1, (int64_t[]){B}), T(m->rot, PHOBOS_F32, 3, (int64_t[]){TC, 2, HD / 2}),
                       T(m->qr, PHOBOS_BF16, 4, (int64_t[]){B, 1, HQ, HD}), T(y->kc, PHOBOS_BF16, 4, (int64_t[]){B, TC, HKV, HD}),
                       T(y->vc, PHOBOS_BF16, 4, (int64_t[]){B, TC, HKV, HD})};
    launch(m, m->rope, "rope_append", r, 7);
    phobos_arg at[7] = {T(m->qr, PHOBOS_BF16, 4, (int64_t[]){B, 1, HQ, HD}), T(y->kc, PHOBOS_BF16, 4, (int64_t[]){B, TC, HKV, HD}),
                        T(y->vc, PHOBOS_BF16, 4, (int64_t[]){B, TC, HKV, HD}), T(m->pos, PHOBOS_I32, 1, (int64_t[]){B}),
                        T(m->op, PHOBOS_F32, 5, (int64_t[]){B, 1, HQ, NS, HD}), T(m->lse, PHOBOS_F32, 4, (int64_t[]){B, 1, HQ, NS}),
                        phobos_float_arg(1.0 / sqrt((double)HD))};
    launch(m, m->split, "gqa_split_len", at, 7);
    phobos_arg mg[3] = {T(m->op, PHOBOS_F32, 5, (int64_t[]){B, 1, HQ, NS, HD}), T(m->lse, PHOBOS_F32, 4, (int64_t[]){B, 1, HQ, NS}),
                        T(m->o, PHOBOS_F32, 4, (int64_t[]){B, 1, HQ, HD})};
    launch(m, m->merge, "gqa_merge_len", mg, 3);
    gemv(m, &y->o, m->o, m->x, true, "q8_gemv_add o");
    norm(m, y->g2);
    gemv(m, &y->gu, m->y, m->gu, false, "q8_gemv gate_up");
    phobos_arg s[2] = {T(m->gu, PHOBOS_F32, 2, (int64_t[]){B, 2 * FF}), T(m->hh, PHOBOS_F32, 2, (int64_t[]){B, FF})};
    launch(m, m->silu, "silu_mul", s, 2);
    gemv(m, &y->down, m->hh, m->x, true, "q8_gemv_add down");
  }
  norm(m, m->gf);
  gemv(m, &m->lm, m->y, m->logits, false, "q8_gemv lm_head");
  phobos_arg g[3] = {T(m->logits, PHOBOS_F32, 2, (int64_t[]){B, VOCAB}), T(m->tok, PHOBOS_I32, 1, (int64_t[]){B}),
                     T(m->pos, PHOBOS_I32, 1, (int64_t[]){B})};
  launch(m, m->argmax, "argmax_step", g, 3);
}

/* ---------------------------------------------------------- reference */

typedef struct MvJob { /* out[b, n] = sum_k a[b, k] w[k, n] s (a slice of n) */
  const double *a;
  const int8_t *w;
  double s, *out;
  int64_t B, K, N, n0, n1;
} MvJob;

static void *mv_part(void *arg) {
  MvJob *j = arg;
  for (int64_t b = 0; b < j->B; b++)
    for (int64_t n = j->n0; n < j->n1; n++) j->out[b * j->N + n] = 0;
  for (int64_t k = 0; k < j->K; k++)
    for (int64_t b = 0; b < j->B; b++) {
      double av = j->a[b * j->K + k] * j->s;
      const int8_t *w = j->w + k * j->N;
      double *o = j->out + b * j->N;
      for (int64_t n = j->n0; n < j->n1; n++) o[n] += av * w[n];
    }
  return NULL;
}

/* out[B, N] = a[B, K] @ (W * scale), W regenerated from its seed; 16 threads */
static void ref_matvec(const Q8 *q, const double *a, int64_t B, double *out, int8_t *wbuf) {
  gen_i8(wbuf, (size_t)(q->K * q->N), q->seed);
  enum { NT = 16 };
  pthread_t th[NT];
  MvJob j[NT];
  for (int t = 0; t < NT; t++) {
    j[t] = (MvJob){a, wbuf, q->scale, out, B, q->K, q->N, q->N * t / NT, q->N * (t + 1) / NT};
    pthread_create(&th[t], NULL, mv_part, &j[t]);
  }
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
}

static void ref_norm(const double *x, double *y, int64_t B) { /* the g's are 1 */
  for (int64_t b = 0; b < B; b++) {
    double ss = 0;
    for (int i = 0; i < HID; i++) ss += x[b * HID + i] * x[b * HID + i];
    double r = 1 / sqrt(ss / HID + EPS);
    for (int i = 0; i < HID; i++) y[b * HID + i] = x[b * HID + i] * r;
  }
}

/* The step in double from the device's state before it: the logits
 * [B, VOCAB] into `logits`. False, with a line said, where that state is
 * out of range (a token or a position the step before wrote wrong). */
static bool reference(Model *m, double *logits) {
  int64_t B = m->B, TC = m->TC;
  int32_t tok[4], pos[4];
  CK(cuMemcpyDtoH(tok, m->tok, sizeof(int32_t) * (size_t)B));
  CK(cuMemcpyDtoH(pos, m->pos, sizeof(int32_t) * (size_t)B));
  for (int64_t b = 0; b < B; b++)
    if (tok[b] < 0 || tok[b] >= VOCAB || pos[b] < 0 || pos[b] >= TC) {
      printf("check: sequence %lld has token %d and position %d on the device, out of range (vocabulary %d, "
             "cache %lld): the step before wrote them wrong\n", (long long)b, tok[b], pos[b], VOCAB, (long long)TC);
      return false;
    }
  int8_t *wbuf = malloc((size_t)VOCAB * HID);
  double *x = calloc((size_t)B * HID, sizeof(double)), *y = calloc((size_t)B * HID, sizeof(double));
  double *qkv = malloc(sizeof(double) * (size_t)B * NQKV), *o = malloc(sizeof(double) * (size_t)B * HQ * HD);
  double *gu = malloc(sizeof(double) * (size_t)B * 2 * FF), *hh = malloc(sizeof(double) * (size_t)B * FF);
  double *t = malloc(sizeof(double) * (size_t)B * HID), *w = malloc(sizeof(double) * (size_t)TC);
  float *bias = malloc(sizeof(float) * NQKV);
  size_t cache_elems = (size_t)B * (size_t)TC * HKV * HD;
  uint16_t *kc = malloc(2 * cache_elems), *vc = malloc(2 * cache_elems);
  gen_i8(wbuf, (size_t)VOCAB * HID, 5);
  for (int64_t b = 0; b < B; b++)
    for (int i = 0; i < HID; i++) x[b * HID + i] = wbuf[(int64_t)tok[b] * HID + i] * (double)(1.0f / 73.3f);
  for (int l = 0; l < m->L; l++) {
    Layer *ly = &m->layer[l];
    ref_norm(x, y, B);
    ref_matvec(&ly->qkv, y, B, qkv, wbuf);
    CK(cuMemcpyDtoH(bias, ly->bias, sizeof(float) * NQKV));
    CK(cuMemcpyDtoH(kc, ly->kc, 2 * cache_elems));
    CK(cuMemcpyDtoH(vc, ly->vc, 2 * cache_elems));
    for (int64_t b = 0; b < B; b++) {
      double *h = qkv + b * NQKV;
      for (int i = 0; i < NQKV; i++) h[i] += bias[i];
      for (int hd = 0; hd < HQ + HKV; hd++) /* RoPE on the query and key heads, the halves paired */
        for (int i = 0; i < HD / 2; i++) {
          double a = (double)pos[b] * pow(THETA, -2.0 * i / HD), c = (double)(float)cos(a), s = (double)(float)sin(a);
          double x1 = h[hd * HD + i], x2 = h[hd * HD + i + HD / 2];
          h[hd * HD + i] = x1 * c - x2 * s, h[hd * HD + i + HD / 2] = x2 * c + x1 * s;
        }
      for (int kv = 0; kv < HKV; kv++) /* this step's keys and values, in bf16 as the caches hold them */
        for (int i = 0; i < HD; i++) {
          size_t at = (((size_t)b * (size_t)TC + (size_t)pos[b]) * HKV + (size_t)kv) * HD + (size_t)i;
          kc[at] = to_bf16((float)h[(HQ + kv) * HD + i]), vc[at] = to_bf16((float)h[(HQ + HKV + kv) * HD + i]);
        }
      for (int hq = 0; hq < HQ; hq++) {
        int kv = hq / (HQ / HKV);
        double mx = -INFINITY, sum = 0, q[HD];
        for (int i = 0; i < HD; i++) q[i] = from_bf16(to_bf16((float)h[hq * HD + i])); /* bf16, as rope_append stores it */
        for (int64_t j = 0; j <= pos[b]; j++) {
          double d = 0;
          const uint16_t *k = kc + (((size_t)b * (size_t)TC + (size_t)j) * HKV + (size_t)kv) * HD;
          for (int i = 0; i < HD; i++) d += q[i] * from_bf16(k[i]);
          w[j] = d / sqrt((double)HD);
          mx = fmax(mx, w[j]);
        }
        for (int64_t j = 0; j <= pos[b]; j++) sum += (w[j] = exp(w[j] - mx));
        for (int i = 0; i < HD; i++) {
          double acc = 0;
          for (int64_t j = 0; j <= pos[b]; j++)
            acc += w[j] * from_bf16(vc[(((size_t)b * (size_t)TC + (size_t)j) * HKV + (size_t)kv) * HD + (size_t)i]);
          o[(b * HQ + hq) * HD + i] = acc / sum;
        }
      }
    }
    ref_matvec(&ly->o, o, B, t, wbuf);
    for (int64_t i = 0; i < B * HID; i++) x[i] += t[i];
    ref_norm(x, y, B);
    ref_matvec(&ly->gu, y, B, gu, wbuf);
    for (int64_t b = 0; b < B; b++)
      for (int i = 0; i < FF; i++) {
        double g = gu[b * 2 * FF + i], u = gu[b * 2 * FF + FF + i];
        hh[b * FF + i] = g / (1 + exp(-g)) * u;
      }
    ref_matvec(&ly->down, hh, B, t, wbuf);
    for (int64_t i = 0; i < B * HID; i++) x[i] += t[i];
  }
  ref_norm(x, y, B);
  ref_matvec(&m->lm, y, B, logits, wbuf);
  free(wbuf), free(x), free(y), free(qkv), free(o), free(gu), free(hh), free(t), free(w), free(bias), free(kc), free(vc);
  return true;
}

/* ---------------------------------------------------------------- main */

static double graph_us(CUgraphExec exec, CUstream s, int n) {
  CUevent e0, e1;
  float ms;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  CK(cuEventRecord(e0, s));
  for (int i = 0; i < n; i++) CK(cuGraphLaunch(exec, s));
  CK(cuEventRecord(e1, s));
  CK(cuEventSynchronize(e1));
  CK(cuEventElapsedTime(&ms, e0, e1));
  CK(cuEventDestroy(e0));
  CK(cuEventDestroy(e1));
  return ms * 1e3;
}

int main(int argc, char **argv) {
  int B = 1, L = 28, check = 2;
  int64_t P = 4096, tokens = 64;
  const char *dir = "build/examples";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--batch") && i + 1 < argc) B = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ctx") && i + 1 < argc) P = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--tokens") && i + 1 < argc) tokens = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--check") && i + 1 < argc) check = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--layers") && i + 1 < argc) L = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min-keys") && i + 1 < argc) attn_min_keys = atoll(argv[++i]);
    else if (argv[i][0] == '-') return fprintf(stderr, "llm_decode_host: unknown option %s\n", argv[i]), 2;
    else dir = argv[i];
  }
  if (B < 1 || B > 4 || L < 1 || P < 1 || tokens < 1 || check < 0 || attn_min_keys < 1)
    return fprintf(stderr, "llm_decode_host: --batch 1 to 4, and --layers, --ctx, --tokens, --min-keys positive\n"), 2;
  if (!host_start("llm_decode")) return 0;
  char path[1024];
  phobos_module *mod;
  snprintf(path, sizeof path, "%s/llm_decode.cubin", dir);
  PK(phobos_module_load(ctx, path, &mod));
  Model m = {0};
  PK(phobos_kernel_get(mod, "embed_q8", &m.embed));
  PK(phobos_kernel_get(mod, "rmsnorm", &m.norm));
  PK(phobos_kernel_get(mod, "q8_gemv", &m.gemv));
  PK(phobos_kernel_get(mod, "q8_gemv_add", &m.gemv_add));
  PK(phobos_kernel_get(mod, "rope_append", &m.rope));
  PK(phobos_kernel_get(mod, "gqa_split_len", &m.split));
  PK(phobos_kernel_get(mod, "gqa_merge_len", &m.merge));
  PK(phobos_kernel_get(mod, "silu_mul", &m.silu));
  PK(phobos_kernel_get(mod, "argmax_step", &m.argmax));
  PK(phobos_kernel_get(mod, "read_roof", &m.roof));
  model_make(&m, L, B, P, tokens + check + 2); /* the steps run: warm-up, checks, timed, per kernel */
  printf("llm_decode: %d layers, batch %d, context %lld, %.2f GB of Q8_0 weights and scales, attention in %lld splits\n",
         L, B, (long long)P, (double)m.weight_bytes / 1e9, (long long)m.NS);

  /* warm-up: the autotuner's choices and the scratch, outside any capture */
  step(&m);
  CK(cuStreamSynchronize(m.stream));
  /* the step, captured once */
  CUgraph graph;
  CUgraphExec exec;
  nlaunched = 0;
  CK(cuStreamBeginCapture(m.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  step(&m);
  CK(cuStreamEndCapture(m.stream, &graph));
  CK(cuGraphInstantiate(&exec, graph, 0));
  int per_step = nlaunched;
  printf("llm_decode: the step captured: %d launches in one graph\n", per_step);

  int pass = 0, fail = 0;
  double *ref = malloc(sizeof(double) * (size_t)B * VOCAB);
  float *got = malloc(sizeof(float) * (size_t)B * VOCAB);
  setvbuf(stdout, NULL, _IOLBF, 0); /* each line out as it is made, a crash or not */
  for (int s = 0; s < check; s++) {
    if (!reference(&m, ref)) {
      fail++;
      break;
    }
    CK(cuGraphLaunch(exec, m.stream));
    CK(cuStreamSynchronize(m.stream));
    CK(cuMemcpyDtoH(got, m.logits, sizeof(float) * (size_t)B * VOCAB));
    int32_t tok[4];
    CK(cuMemcpyDtoH(tok, m.tok, sizeof(int32_t) * (size_t)B));
    double maxerr = 0, maxref = 0;
    bool nan = false, same = true, tie = true;
    for (int64_t b = 0; b < B; b++) {
      int64_t best = 0;
      for (int64_t v = 0; v < VOCAB; v++) {
        double r = ref[b * VOCAB + v], g = got[b * VOCAB + v];
        if (isnan(g)) nan = true;
        maxerr = fmax(maxerr, fabs(g - r)), maxref = fmax(maxref, fabs(r));
        if (r > ref[b * VOCAB + best]) best = v;
      }
      if (tok[b] != best) {
        same = false; /* a near tie is no failure: the GPU's token within the tolerance of the best */
        tie &= tok[b] >= 0 && tok[b] < VOCAB && ref[b * VOCAB + best] - ref[b * VOCAB + tok[b]] < 2e-2 * maxref;
      }
    }
    double err = nan ? INFINITY : maxerr / fmax(maxref, 1e-30);
    bool ok = err < 2e-2 && (same || tie);
    pass += ok, fail += !ok;
    printf("check step %d: logits rel err %.2e, greedy tokens %s  %s\n", s, err,
           same ? "equal" : tie ? "differ within the tolerance (a near tie)" : "DIFFER", ok ? "ok" : "FAIL");
  }

  /* tokens/s: the graph replayed (uploaded first, so that no replay pays for it) */
  CK(cuGraphUpload(exec, m.stream));
  double us = graph_us(exec, m.stream, (int)tokens) / (double)tokens;
  /* per kernel: one step launched kernel by kernel, an event after each
   * (the gaps between launches count to the kernel after them) */
  if (per_step > MAX_LAUNCHES) return fprintf(stderr, "llm_decode_host: %d launches a step; at most %d\n", per_step, MAX_LAUNCHES), 2;
  CUevent *ev = malloc(sizeof(CUevent) * (size_t)(per_step + 1));
  for (int i = 0; i <= per_step; i++) CK(cuEventCreate(&ev[i], 0));
  nlaunched = 0;
  CK(cuEventRecord(ev[0], m.stream));
  step_events = ev;
  /* LLM_PROFILE_STEP=1: this step alone between cuProfilerStart and Stop,
   * for a profiler started with its collection off (ncu
   * --profile-from-start off: each kernel's own duration, no launch gaps) */
  const char *prof = getenv("LLM_PROFILE_STEP");
  bool profile = prof && !strcmp(prof, "1");
  if (profile) CK(cuProfilerStart());
  step(&m);
  if (profile) CK(cuProfilerStop());
  step_events = NULL;
  CK(cuEventSynchronize(ev[per_step]));
  float plain_ms;
  CK(cuEventElapsedTime(&plain_ms, ev[0], ev[per_step]));
  const char *names[32];
  double kus[32];
  int counts[32], nk = 0;
  for (int i = 0; i < per_step; i++) {
    float ms;
    CK(cuEventElapsedTime(&ms, ev[i], ev[i + 1]));
    int k = 0;
    while (k < nk && strcmp(names[k], launched[i])) k++;
    if (k == nk && nk < 32) names[nk] = launched[i], kus[nk] = 0, counts[nk] = 0, nk++;
    if (k < nk) kus[k] += ms * 1e3, counts[k]++;
  }
  for (int i = 0; i <= per_step; i++) CK(cuEventDestroy(ev[i]));
  free(ev);

  /* the roof: the step's bytes over read_roof's bandwidth on the weights */
  int64_t rows = (int64_t)(m.arena_bytes / 4096);
  phobos_arg ra[2] = {T(m.arena, PHOBOS_I32, 2, (int64_t[]){rows, 1024}),
                      T(m.roof_out, PHOBOS_I32, 2, (int64_t[]){rows / 256 + 1, 1})};
  PK(phobos_launch(m.roof, ra, 2, m.stream));
  CK(cuStreamSynchronize(m.stream));
  CUevent r0, r1;
  CK(cuEventCreate(&r0, 0));
  CK(cuEventCreate(&r1, 0));
  CK(cuEventRecord(r0, m.stream));
  for (int i = 0; i < 5; i++) PK(phobos_launch(m.roof, ra, 2, m.stream));
  CK(cuEventRecord(r1, m.stream));
  CK(cuEventSynchronize(r1));
  float roof_ms;
  CK(cuEventElapsedTime(&roof_ms, r0, r1));
  double read_bw = (double)m.arena_bytes * 5 / (roof_ms * 1e-3);
  /* beside it, a device copy of the first half of the same bytes (read and
   * written: a cross-check that read_roof is not slow itself) */
  size_t half = m.arena_bytes / 2 / 4096 * 4096;
  CUdeviceptr copy_to;
  CK(cuMemAlloc(&copy_to, half));
  CK(cuMemcpyDtoDAsync(copy_to, m.arena, half, m.stream));
  CK(cuEventRecord(r0, m.stream));
  for (int i = 0; i < 3; i++) CK(cuMemcpyDtoDAsync(copy_to, m.arena, half, m.stream));
  CK(cuEventRecord(r1, m.stream));
  CK(cuEventSynchronize(r1));
  float copy_ms;
  CK(cuEventElapsedTime(&copy_ms, r0, r1));
  CK(cuMemFree(copy_to));
  double copy_bw = 2.0 * (double)half * 3 / (copy_ms * 1e-3);
  /* the step reads B rows of the embedding table, not all of it */
  double emb_all = (double)VOCAB * HID + 4.0 * VOCAB * HB, emb_rows = (double)B * (HID + 4.0 * HB);
  double step_weights = (double)m.weight_bytes - emb_all + emb_rows;
  double mid = (double)P + (double)check + 1 + (double)tokens / 2; /* the timed steps' average position (after the warm-up's) */
  double kv_bytes = (double)L * B * (2.0 * mid * HKV * HD * 2 + 2.0 * HKV * HD * 2);
  double act_bytes = (double)L * B * 4.0 * (6.0 * HID + 3.0 * NQKV + 4.0 * FF) + (double)B * 4 * 2 * VOCAB;
  double bytes = step_weights + kv_bytes + act_bytes, roof_us = bytes / read_bw * 1e6;
  printf("decode B %d ctx %lld: %.1f us a step, %.1f tokens/s (a graph of %d launches; launched one by one %.1f us)\n",
         B, (long long)P, us, B * 1e6 / us, per_step, plain_ms * 1e3);
  printf("roof: %.3f GB a step (weights and scales %.3f, of %.3f held; KV %.3f; activations %.3f) at %.2f TB/s "
         "(read_roof over the weights; a device copy of them %.2f TB/s) = %.1f us: %.1f%% of the roof\n", bytes / 1e9,
         step_weights / 1e9, (double)m.weight_bytes / 1e9, kv_bytes / 1e9, act_bytes / 1e9, read_bw / 1e12,
         copy_bw / 1e12, roof_us, 100 * roof_us / us);
  printf("time per kernel, one step launched kernel by kernel (%.1f us in all):\n", plain_ms * 1e3);
  for (int k = 0; k < nk; k++)
    printf("  %-18s %4d launches %9.1f us  %5.1f%%\n", names[k], counts[k], kus[k], 100 * kus[k] / (plain_ms * 1e3));
  free(ref), free(got);
  CK(cuGraphExecDestroy(exec));
  CK(cuGraphDestroy(graph));
  phobos_context_destroy(ctx);
  printf("%d passed, %d failed\n", pass, fail);
  return fail ? 1 : 0;
}
