/* workspace.c: the scratch tensors a kernel declares with @scratch (spec
 * 11, 17.3): partial sums, log-sum-exps, arrival counters. The caller
 * passes the kernel's other parameters only; before each launch the
 * runtime computes each scratch tensor's extents for the variant (the
 * manifest's programs over the launch's dims), finds its buffer for the
 * launch's stream, and passes it. Buffers belong to the kernel, one set a
 * stream (two streams never share one), and are reused launch after
 * launch; one too small is replaced (after its stream's earlier work is
 * done) and only then is memory allocated, so a warmed-up kernel launches
 * with no allocation and no host synchronization (a CUDA graph can capture
 * it). A `= 0` tensor is zeroed when its buffer is made; the kernel must
 * leave it zero, as arrive's counters do (each wraps to 0 at its n-th
 * arrival). Rows are laid at a pitch of a multiple of 16 bytes, bases at
 * the driver's 256: every variant's tensor maps and aligned-rows paths
 * take them. */
#include "rt.h"

#include <string.h>

/* The buffer set of `stream` into *out: its own, or a free one, or (all
 * taken) the least recently used, whose stream's work is waited for before
 * its buffers go. A status with the error set where it cannot. */
static phobos_status ws_of(phobos_kernel *k, CUstream stream, struct RtWs **out) {
  phobos_context *ctx = k->mod->ctx;
  struct RtWs *ws = NULL, *lru = NULL; /* lru: a free set first, else the least recently used */
  for (int i = 0; i < RT_WS_STREAMS && !ws; i++) {
    struct RtWs *w = &k->ws[i];
    if (w->used && w->stream == stream) ws = w;
    else if (!lru || (lru->used && (!w->used || w->tick < lru->tick))) lru = w;
  }
  if (!ws) {
    ws = lru;
    if (ws->used && cu_capturing(ctx->cu, stream))
      return rt_set_err(ctx, PHOBOS_NOT_WARMED_UP, "kernel '%s': its %d scratch buffer sets are all held by other "
                        "streams, and taking one waits for its stream, which a graph capture cannot hold: launch it "
                        "on this stream once before the capture", k->mf->name, RT_WS_STREAMS);
    if (ws->used) {
      /* its stream's work first; a stream destroyed since cannot be waited
       * for, so the whole context is (else this slot would fail every
       * launch from a new stream from then on) */
      char buf[200];
      CUresult r = ctx->cu->StreamSynchronize(ws->stream);
      if (r != CU_SUCCESS) r = ctx->cu->CtxSynchronize();
      if (r != CU_SUCCESS) {
        return rt_set_err(ctx, PHOBOS_CUDA_ERROR, "kernel '%s': waiting for the work on stream %p before its scratch "
                          "buffers go to another stream: %s", k->mf->name, (void *)ws->stream,
                          cu_error(ctx->cu, r, buf, sizeof buf));
      }
      for (int c = 0; c < MF_MAX_SCRATCH; c++)
        if (ws->ptr[c]) ctx->cu->MemFree(ws->ptr[c]);
    }
    memset(ws, 0, sizeof *ws);
    ws->used = true, ws->stream = stream;
  }
  ws->tick = ++k->ws_tick;
  *out = ws;
  return PHOBOS_OK;
}

phobos_status rt_scratch_fill(phobos_kernel *k, const MfVariant *v, const RtBinding *b, phobos_arg *args,
                              CUstream stream) {
  const MfKernel *mk = k->mf;
  if (!mk->nscratch) return PHOBOS_OK;
  phobos_context *ctx = k->mod->ctx;
  const CuApi *cu = ctx->cu;
  struct RtWs *ws = NULL;
  phobos_status ws_status = ws_of(k, stream, &ws);
  if (ws_status != PHOBOS_OK) return ws_status;
  char buf[200];
  for (int c = 0; c < mk->nscratch; c++) {
    int q = mk->nparams - mk->nscratch + c;
    const MfParam *mp = &mk->params[q];
    phobos_tensor *t = &args[q].tensor;
    memset(&args[q], 0, sizeof args[q]);
    args[q].kind = PHOBOS_ARG_TENSOR;
    t->dtype = mp->dtype, t->rank = mp->rank;
    int64_t eb = mf_dtype_bytes(mp->dtype), bytes = eb;
    for (int d = 0; d < mp->rank; d++) {
      RtEvalFail w;
      int64_t e;
      if (!rt_eval_program(v->scratch[c][d].ops, v->scratch[c][d].nops, b, NULL, &e, &w))
        return rt_set_err(ctx, PHOBOS_BAD_SHAPE, "kernel '%s' variant '%s': dim %d of scratch tensor '%s' cannot be "
                          "computed (%s)", mk->name, v->entry, d, mp->name,
                          w.kind == RT_EVAL_MISSING ? "a dim no tensor gave" : w.kind == RT_EVAL_ZERO ? "a division by zero"
                                                                                                     : "an overflow");
      if (e < 1 || e > INT32_MAX)
        return rt_set_err(ctx, PHOBOS_BAD_SHAPE, "kernel '%s' variant '%s': scratch tensor '%s' dim %d is %lld; extents "
                          "are from 1 to %d", mk->name, v->entry, mp->name, d, (long long)e, INT32_MAX);
      t->shape[d] = e;
    }
    /* row-major, the last dim's rows at a multiple of 16 bytes */
    int64_t stride = 1;
    for (int d = mp->rank - 1; d >= 0; d--) {
      t->strides[d] = stride;
      int64_t run = d == mp->rank - 1 ? (t->shape[d] * eb + 15) / 16 * 16 / eb : t->shape[d];
      if (!rt_mul_ok(stride, run, &stride))
        return rt_set_err(ctx, PHOBOS_BAD_SHAPE, "kernel '%s': scratch tensor '%s' is too large", mk->name, mp->name);
    }
    size_t size;
    if (!rt_mul_ok(stride, eb, &bytes) || !rt_size_ok(bytes, &size))
      return rt_set_err(ctx, PHOBOS_BAD_SHAPE, "kernel '%s': scratch tensor '%s' is too large", mk->name, mp->name);
    if (ws->bytes[c] < size && cu_capturing(cu, stream))
      return rt_set_err(ctx, PHOBOS_NOT_WARMED_UP, "kernel '%s': scratch tensor '%s' needs %zu bytes on this stream and "
                        "has %zu; a graph capture cannot hold the allocation (and the wait for the old buffer): launch "
                        "the kernel once at its largest dims before the capture", mk->name, mp->name, size, ws->bytes[c]);
    if (ws->bytes[c] < size) {
      CUresult r = CU_SUCCESS;
      if (ws->ptr[c]) { /* the stream's earlier launches may still use it: kept (and kept counted) until they are done */
        r = cu->StreamSynchronize(stream);
        if (r == CU_SUCCESS) {
          cu->MemFree(ws->ptr[c]);
          ws->ptr[c] = 0, ws->bytes[c] = 0;
        }
      }
      CUdeviceptr fresh = 0;
      if (r == CU_SUCCESS) r = cu->MemAlloc(&fresh, size);
      if (r == CU_SUCCESS && mp->scratch == MF_SCRATCH_ZERO) {
        if (cu->MemsetD8Async) {
          r = cu->MemsetD8Async(fresh, 0, size, stream);
        } else { /* on the legacy stream: done before a non-blocking stream's launch only after a wait */
          r = cu->MemsetD8(fresh, 0, size);
          if (r == CU_SUCCESS) r = cu->CtxSynchronize();
        }
      }
      if (r != CU_SUCCESS) {
        if (fresh) cu->MemFree(fresh);
        return rt_set_err(ctx, r == CU_ERROR_OUT_OF_MEMORY ? PHOBOS_OUT_OF_MEMORY : PHOBOS_CUDA_ERROR,
                          "kernel '%s': scratch tensor '%s' (%lld bytes): %s", mk->name, mp->name, (long long)bytes,
                          cu_error(cu, r, buf, sizeof buf));
      }
      ws->ptr[c] = fresh, ws->bytes[c] = size;
    }
    t->data = ws->ptr[c];
  }
  return PHOBOS_OK;
}

void rt_scratch_free(phobos_kernel *k) {
  if (!k->mod) return;
  const CuApi *cu = k->mod->ctx->cu;
  for (int i = 0; i < RT_WS_STREAMS; i++) {
    struct RtWs *w = &k->ws[i];
    if (!w->used) continue;
    cu->StreamSynchronize(w->stream); /* (a failure leaves nothing better to do than free) */
    for (int c = 0; c < MF_MAX_SCRATCH; c++)
      if (w->ptr[c]) cu->MemFree(w->ptr[c]);
    memset(w, 0, sizeof *w);
  }
}
