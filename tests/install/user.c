/* user.c: a C program built out of the tree against an installed phobos
 * (tests/install.sh): the header and library through pkg-config, a module
 * written by the installed phobosc, loaded from its files and from the C
 * file of --emit=c linked in (scale_mod.c), launched plainly and through
 * the typed launcher of --emit=header (scale.h), over the fake driver
 * (PHOBOS_LIBCUDA), every status checked. Exits 0 when all is as a user
 * expects, printing one line a check. */
#include <phobos.h>
#include <stdint.h>

#include "scale.h" /* phobosc --emit=header: scale_launch */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

phobos_status scale_mod_module_load(phobos_context *ctx, phobos_module **out); /* scale_mod.c */

static void check(int ok, const char *what, const char *detail) {
  printf("%s - %s%s%s\n", ok ? "ok" : "not ok", what, detail && !ok ? ": " : "", detail && !ok ? detail : "");
  failures += !ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: user MODULE.cubin\n");
    return 2;
  }
  phobos_context *ctx = NULL;
  phobos_module *mod = NULL;
  phobos_kernel *k = NULL;
  phobos_status s = phobos_context_create(0, &ctx);
  check(s == PHOBOS_OK, "a context over the driver", ctx ? phobos_last_error(ctx) : phobos_status_name(s));
  if (s != PHOBOS_OK) return 1;
  s = phobos_module_load(ctx, argv[1], &mod);
  check(s == PHOBOS_OK, "the module phobosc wrote", phobos_last_error(ctx));
  if (s == PHOBOS_OK) s = phobos_kernel_get(mod, "scale", &k);
  check(s == PHOBOS_OK, "its kernel 'scale'", phobos_last_error(ctx));
  if (s != PHOBOS_OK) return 1;
  phobos_module *emb = NULL;
  phobos_kernel *ke = NULL;
  s = scale_mod_module_load(ctx, &emb);
  check(s == PHOBOS_OK, "the same module embedded (phobosc --emit=c)", phobos_last_error(ctx));
  if (s == PHOBOS_OK) s = phobos_kernel_get(emb, "scale", &ke);
  check(s == PHOBOS_OK, "its kernel 'scale'", phobos_last_error(ctx));
  if (s != PHOBOS_OK) return 1;
  /* the fake driver's device memory is the host's (the autotuner saves
   * and restores the written tensors through it) */
  int64_t n = 1000;
  float *x = aligned_alloc(256, 4096), *y = aligned_alloc(256, 4096);
  if (!x || !y) return 1;
  phobos_arg args[3] = {
      phobos_tensor_arg((uint64_t)(uintptr_t)x, PHOBOS_F32, 1, (int64_t[]){n}),
      phobos_tensor_arg((uint64_t)(uintptr_t)y, PHOBOS_F32, 1, (int64_t[]){n}),
      phobos_float_arg(2.0),
  };
  s = phobos_launch(k, args, 3, NULL);
  check(s == PHOBOS_OK, "a launch", phobos_last_error(ctx));
  s = phobos_launch(ke, args, 3, NULL);
  check(s == PHOBOS_OK, "a launch of the embedded kernel", phobos_last_error(ctx));
  s = scale_launch(ke, x, y, 2.0f, n, NULL);
  check(s == PHOBOS_OK, "a launch through the typed launcher", phobos_last_error(ctx));
  /* a view: every other element of x, through the views launcher: the
   * kernel's general-strides entry takes it (spec 16.3) */
  s = scale_launch_views(ke, x, (const int64_t[]){2}, y, NULL, 2.0f, n / 2, NULL);
  const char *gv = phobos_kernel_last_variant(ke);
  check(s == PHOBOS_OK && gv && strstr(gv, "_strided") != NULL,
        "the views launcher with X's last stride 2: its general-strides entry", s ? phobos_last_error(ctx) : gv);
  s = scale_launch_views(ke, x, (const int64_t[]){-1}, y, NULL, 2.0f, n / 2, NULL);
  check(s == PHOBOS_BAD_ARGUMENT && strstr(phobos_last_error(ctx), "dim 0 has stride -1") != NULL,
        "the views launcher with a negative stride: refused, naming X's dim", phobos_last_error(ctx));
  s = scale_launch_views(ke, x, (const int64_t[]){1}, y, (const int64_t[]){1}, 2.0f, n, NULL);
  check(s == PHOBOS_OK, "a launch through the views launcher, unit strides", phobos_last_error(ctx));
  s = scale_launch(ke, NULL, y, 2.0f, n, NULL);
  check(s == PHOBOS_BAD_POINTER && strstr(phobos_last_error(ctx), "'X'") != NULL,
        "the typed launcher with X NULL: refused by the same checks, naming X", phobos_last_error(ctx));
  args[1] = phobos_tensor_arg((uint64_t)(uintptr_t)y, PHOBOS_F32, 1, (int64_t[]){n - 1});
  s = phobos_launch(k, args, 3, NULL);
  check(s != PHOBOS_OK && strstr(phobos_last_error(ctx), "'Y'") != NULL,
        "a launch with Y one short: refused, naming Y", phobos_last_error(ctx));
  phobos_module_unload(mod);
  phobos_module_unload(emb);
  phobos_context_destroy(ctx);
  free(x);
  free(y);
  return failures ? 1 : 0;
}
