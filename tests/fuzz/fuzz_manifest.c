/* fuzz_manifest.c: a libFuzzer target for the runtime's manifest reader
 * (runtime/manifest.c, mf_parse: the bytes as a manifest held in memory),
 * and for what the runtime then does with a manifest it accepts: arguments
 * bound to every kernel (rt_bind) with extents taken from edge values, and
 * every variant's grid programs evaluated (rt_grid, checked int64
 * arithmetic) over the bound dims. Any crash, sanitizer report, hang, leak
 * or out-of-memory is a finding. Build and run with
 * tests/fuzz/run.sh SECONDS JOBS manifest; test_runtime.c runs this same
 * function over tests/golden/manifest/ (the regression inputs). */
#include <stdint.h>
#include <string.h>

#include "rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the extents a dim may take: each name gets one, picked by its hash and the input's size */
static const int64_t edges[] = {1, 2, 7, 64, 65535, 65536, INT32_MAX};

static int64_t edge_for(const char *name, size_t salt) {
  uint64_t h = 1469598103934665603ull ^ salt;
  for (; *name; name++) h = (h ^ (unsigned char)*name) * 1099511628211ull;
  return edges[h % (sizeof edges / sizeof edges[0])];
}

static void exercise(const MfKernel *k, size_t salt) {
  static phobos_arg args[MF_MAX_PARAMS];
  char err[1024];
  for (int i = 0; i < k->nparams; i++) {
    const MfParam *p = &k->params[i];
    if (!p->tensor) {
      args[i] = p->dtype <= PHOBOS_F64 ? phobos_float_arg(0.5) : p->dtype == PHOBOS_BOOL ? phobos_bool_arg(1)
                                                                                          : phobos_int_arg(3);
      continue;
    }
    int64_t shape[PHOBOS_MAX_RANK];
    for (int d = 0; d < p->rank; d++) shape[d] = p->dimname[d] ? edge_for(p->dimname[d], salt) : p->dim[d];
    args[i] = phobos_tensor_arg(0x100000, p->dtype, p->rank, shape);
  }
  RtBinding b;
  if (rt_bind(k, args, k->nparams, &b, err, sizeof err) != PHOBOS_OK) {
    /* a literal extent the edges cannot meet: bind the names alone */
    memset(&b, 0, sizeof b);
    for (int i = 0; i < k->nparams; i++)
      for (int d = 0; d < k->params[i].rank && b.ndims < 32; d++)
        if (k->params[i].dimname[d]) {
          b.name[b.ndims] = k->params[i].dimname[d];
          b.value[b.ndims++] = edge_for(k->params[i].dimname[d], salt);
        }
  }
  static const int64_t max[3] = {INT32_MAX, 65535, 65535};
  for (int v = 0; v < k->nvariants; v++) {
    int64_t grid[3];
    (void)rt_variant_fits(&k->variants[v], &b);
    (void)rt_grid(&k->variants[v], &b, max, grid, err, sizeof err);
    (void)rt_grid(&k->variants[v], &b, NULL, grid, err, sizeof err);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Manifest m;
  char err[1024];
  if (!mf_parse("fuzz.yaml", (const char *)data, size, &m, err, sizeof err)) return 0;
  for (int i = 0; i < m.nkernels; i++) exercise(&m.kernels[i], size);
  mf_free(&m);
  return 0;
}
