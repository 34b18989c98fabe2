/* app.c: a C program that carries its kernel (scale.ph, compiled by its
 * build into scale_mod.c and scale.h: see meson.build and CMakeLists.txt)
 * and launches it through the typed launcher. With a device pointer X and
 * Y of n floats each: ./app n. Without a GPU it reports the driver's
 * absence and exits 1; tests/install.sh runs it over the fake driver. */
#include <phobos.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scale.h"

phobos_status scale_mod_module_load(phobos_context *ctx, phobos_module **out);

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000;
  phobos_context *ctx = NULL;
  phobos_module *mod = NULL;
  phobos_kernel *k = NULL;
  phobos_status s = phobos_context_create(0, &ctx);
  if (s == PHOBOS_OK) s = scale_mod_module_load(ctx, &mod);
  if (s == PHOBOS_OK) s = phobos_kernel_get(mod, "scale", &k);
  /* device memory is the program's own business (cuMemAlloc, torch, ...);
   * under the fake driver of the tests a host buffer stands in */
  float *x = aligned_alloc(256, (size_t)(n * 4 + 255) / 256 * 256), *y = aligned_alloc(256, (size_t)(n * 4 + 255) / 256 * 256);
  if (s == PHOBOS_OK && x && y) s = scale_launch(k, x, y, 2.0f, n, NULL);
  printf("%s%s%s\n", phobos_status_name(s), s == PHOBOS_OK ? "" : ": ", s == PHOBOS_OK ? "" : phobos_last_error(ctx));
  free(x);
  free(y);
  phobos_context_destroy(ctx);
  return s == PHOBOS_OK ? 0 : 1;
}
