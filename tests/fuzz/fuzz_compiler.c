/* fuzz_compiler.c: a libFuzzer target for the whole compiler up to PTX
 * text: lexer, parser, sema under every @autotune point, lowering, the IR
 * verifier, the planner and the PTX emitter (not ptxas). Any crash, sanitizer report, hang or exit (an
 * internal compiler error exits 4) is a finding. Build and run with
 * tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sink) sink = fopen("/dev/null", "w");
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  Source src = {.name = "fuzz.ph", .text = text, .len = size};
  /* two constants, so that -D paths run too */
  Define defs[2] = {{.name = "NQ", .value = "7"}, {.name = "BQ", .value = "16"}};
  DriverOptions o = {.input = "fuzz.ph", .arch = (size & 1) ? "sm_80" : "sm_90a", .emit = EMIT_PTX,
                     .plain = (size & 2) != 0, .max_errors = 20, .defines = defs, .ndefines = (size & 4) ? 2 : 0,
                     /* the planner switches too: no tensor copies, prefetching, a producer warp */
                     .no_tensor_copies = (size & 8) != 0, .prefetch = (size & 16) != 0, .producer_warp = (size & 32) != 0,
                     /* a kernel of more points is an error, reported at once: a seed's whole space (the
                      * GQA decode's eight points at BQ 16, under the sanitizers) would outlast the timeout,
                      * and a point compiles as the first four do */
                     .max_variants = 4};
  driver_compile_source(&o, &src, sink, sink);
  free(text);
  return 0;
}
