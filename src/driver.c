/* driver.c: the pass order, written out once.
 *
 *   load -> lex -> parse -> check (every @autotune point)
 *   -> for each kernel and variant: check the variant -> lower to tile IR
 *      -> verify -> plan -> verify
 *
 * --emit=STAGE stops after STAGE and prints what it produced. The output is
 * built in memory and written only when the run succeeds, so a failed run
 * leaves no partial file behind. */
#include "driver.h"
#include "manifest.h"
#include "tir.h"

#include <stdlib.h>
#include <string.h>

/* Every variant of every kernel through the middle of the compiler. */
static void compile_variants(Arena *arena, Diags *d, const Source *src, Node *program, SemaOptions *so,
                             const DriverOptions *o, FILE *out) {
  PtrVec plans = {0};
  for (int k = 0; k < program->list.len && !d->errors; k++) {
    Node *kernel = program->list.items[k];
    int n = sema_variant_count(arena, d, kernel, so);
    for (int v = 0; v < n && !d->errors; v++) {
      KernelInfo *info = arena_alloc(arena, sizeof *info);
      if (!sema_check_variant(arena, d, kernel, so, v, info)) break;
      TirFunc *f = lower_kernel(arena, d, info);
      if (!f) break;
      if (o->emit == EMIT_TIR) {
        tir_print(out, f);
        continue;
      }
      Plan *p = plan_kernel(arena, d, f, o->arch);
      if (!p || !tir_verify(d, f, "planning")) break;
      if (o->emit == EMIT_PLAN) plan_print(out, p);
      else if (o->emit == EMIT_PLAN_YAML) plan_print_yaml(out, p);
      vec_push(arena, &plans, p);
    }
  }
  if (o->emit == EMIT_MANIFEST && !d->errors) {
    char err[512] = "";
    const char *base = o->input ? strrchr(o->input, '/') : NULL;
    const char *name = base ? base + 1 : o->input ? o->input : "kernel.ph";
    size_t n = strlen(name);
    const char *cubin = arena_printf(arena, "%.*s.cubin", (int)(n > 3 && !strcmp(name + n - 3, ".ph") ? n - 3 : n), name);
    if (!manifest_write(out, src, o->arch, cubin, (Plan **)plans.items, plans.len, err, sizeof err))
      diag_ice("%s", err);
  }
}

int driver_compile(const DriverOptions *o, FILE *out, FILE *err) {
  Arena *arena = arena_new();
  Source src;
  const char *why;
  if (!source_load(arena, o->input, &src, &why)) {
    fprintf(err, "phobosc: error: cannot read '%s': %s\n", o->input, why);
    arena_free(arena);
    return DRIVER_SOURCE_ERROR;
  }
  int status = driver_compile_source(o, &src, out, err);
  arena_free(arena);
  return status;
}

int driver_compile_source(const DriverOptions *o, const Source *src_in, FILE *out, FILE *err) {
  Arena *arena = arena_new();
  Source src = *src_in;
  Diags diags;
  diag_init(&diags, &src, err, o->plain);
  diags.max_errors = o->max_errors;

  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) diag_ice("cannot open an output buffer");

  if (o->emit == EMIT_TOKENS) {
    lex_dump_tokens(arena, &diags, &src, mem);
  } else {
    Node *program = parse_program(arena, &diags, &src);
    if (program) {
      SemaOptions so = {.defines = o->defines, .ndefines = o->ndefines, .max_variants = 4096};
      if (sema_check(arena, &diags, program, &so)) {
        if (o->emit == EMIT_AST) ast_print(mem, program);
        else compile_variants(arena, &diags, &src, program, &so, o, mem); /* a plain check plans too */
      }
    }
  }
  fclose(mem);

  int status = diags.errors ? DRIVER_SOURCE_ERROR : DRIVER_OK;
  if (status == DRIVER_OK && len) {
    FILE *f = o->output ? fopen(o->output, "wb") : out;
    if (!f) {
      fprintf(err, "phobosc: error: cannot open '%s' for writing\n", o->output);
      status = DRIVER_SOURCE_ERROR;
    } else {
      size_t wrote = fwrite(buf, 1, len, f);
      int closed = o->output ? fclose(f) : fflush(f);
      if (wrote != len || closed != 0) {
        fprintf(err, "phobosc: error: writing '%s' failed\n", o->output ? o->output : "<stdout>");
        status = DRIVER_SOURCE_ERROR;
      }
    }
  }
  free(buf);
  arena_free(arena);
  return status;
}
