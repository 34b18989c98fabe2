/* launcher.c: `phobosc --emit=header`, typed launchers.
 *
 * One static inline function a kernel, K_launch(k, params..., dims...,
 * stream): each tensor a typed device pointer (const where no variant of
 * the kernel writes it), each scalar its C type, then each named dim once
 * (an int64_t, in the order the parameters first use them). It builds the
 * phobos_arg array and calls phobos_launch, so the runtime checks it as it
 * checks any launch (spec 17.1): the header adds types, not another check.
 * K_launch's tensors are contiguous, as phobos_tensor_arg makes them;
 * K_launch_views takes each tensor's strides after it (spec 16.3). */
#include "launcher.h"

#include <string.h>

/* a tensor element's C type: 16-bit floats as their words, bool as a byte */
static const char *c_type(Scalar s) {
  switch (s) {
  case S_F16: case S_BF16: return "uint16_t";
  case S_F32: return "float";
  case S_F64: return "double";
  case S_I8: return "int8_t";
  case S_U8: case S_BOOL: return "uint8_t";
  case S_I32: return "int32_t";
  case S_I64: return "int64_t";
  default: return "void";
  }
}

/* a scalar parameter's C type, and the phobos_arg helper that takes it */
static const char *scalar_c_type(Scalar s) {
  switch (s) {
  case S_BOOL: return "int";
  case S_F16: case S_BF16: case S_F32: return "float";
  default: return c_type(s);
  }
}

static const char *scalar_arg(Scalar s) {
  switch (s) {
  case S_BOOL: return "phobos_bool_arg";
  case S_I8: case S_U8: case S_I32: case S_I64: return "phobos_int_arg";
  default: return "phobos_float_arg";
  }
}

static const char *dtype_enum(Scalar s) {
  switch (s) {
  case S_F16: return "PHOBOS_F16";
  case S_BF16: return "PHOBOS_BF16";
  case S_F32: return "PHOBOS_F32";
  case S_F64: return "PHOBOS_F64";
  case S_I8: return "PHOBOS_I8";
  case S_U8: return "PHOBOS_U8";
  case S_I32: return "PHOBOS_I32";
  case S_I64: return "PHOBOS_I64";
  default: return "PHOBOS_BOOL";
  }
}

/* a source name as a C identifier that no C keyword or header name takes */
static const char *c_name(Arena *a, const char *name) {
  static const char *reserved[] = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
                                   "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
                                   "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
                                   "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
                                   "true", "false", "k", "stream", "args", "NULL"};
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (!strcmp(name, reserved[i])) return arena_printf(a, "%s_", name);
  return name;
}

/* the name of tensor `name`'s strides argument in a views launcher: NAME_strides,
 * with a _ more while a parameter or dim of the kernel has that name */
static const char *strides_name(Arena *a, const TirFunc *f, const char *name) {
  const char *s = arena_printf(a, "%s_strides", name);
  for (bool clash = true; clash;) {
    clash = false;
    for (int p = 0; p < f->nparams && !clash; p++) {
      clash = !strcmp(c_name(a, f->params[p].name), s);
      for (int d = 0; f->params[p].tensor && d < f->params[p].rank && !clash; d++)
        clash = f->params[p].dimname[d] && !strcmp(c_name(a, f->params[p].dimname[d]), s);
    }
    if (clash) s = arena_printf(a, "%s_", s);
  }
  return s;
}

/* One launcher of the kernel of plans[i..j): K_launch, or with views K_launch_views, whose every
 * tensor is followed by its strides (rank int64_t elements, as phobos_tensor's; NULL: contiguous) */
static void write_launcher(Arena *a, FILE *out, Plan **plans, int i, int j, bool views) {
  const TirFunc *f = plans[i]->f;
  /* @scratch's tensors (the last) are the runtime's to pass */
  int nuser = 0;
  while (nuser < f->nparams && !f->params[nuser].scratch) nuser++;
  /* the named dims, each once, in the order the parameters use them */
  int ndims = 0, most = 0;
  for (int p = 0; p < f->nparams; p++) most += f->params[p].tensor ? f->params[p].rank : 0;
  const char **dims = arena_alloc(a, sizeof(char *) * (size_t)(most + 1));
  for (int p = 0; p < nuser; p++)
    for (int d = 0; f->params[p].tensor && d < f->params[p].rank; d++) {
      const char *n = f->params[p].dimname[d];
      bool seen = !n;
      for (int q = 0; q < ndims && !seen; q++) seen = !strcmp(dims[q], n);
      if (!seen) dims[ndims++] = n;
    }
  fprintf(out, "\nstatic inline phobos_status %s_launch%s(phobos_kernel *k", f->name, views ? "_views" : "");
  for (int p = 0; p < nuser; p++) {
    const TirParam *tp = &f->params[p];
    if (tp->tensor) {
      bool written = false;
      for (int v = i; v < j; v++) written |= tir_stores_to(&plans[v]->f->body, p);
      fprintf(out, ", %s%s *%s", written ? "" : "const ", c_type(tp->elem), c_name(a, tp->name));
      if (views) fprintf(out, ", const int64_t *%s", strides_name(a, f, c_name(a, tp->name)));
    } else {
      fprintf(out, ", %s %s", scalar_c_type(tp->elem), c_name(a, tp->name));
    }
  }
  for (int q = 0; q < ndims; q++) fprintf(out, ", int64_t %s", c_name(a, dims[q]));
  fprintf(out, ", void *stream) {\n  phobos_arg args[%d];\n", nuser > 0 ? nuser : 1);
  for (int p = 0; p < nuser; p++) {
    const TirParam *tp = &f->params[p];
    const char *n = c_name(a, tp->name);
    if (!tp->tensor) {
      fprintf(out, "  args[%d] = %s(%s);\n", p, scalar_arg(tp->elem), n);
      continue;
    }
    fprintf(out, "  args[%d] = phobos_tensor_arg((uint64_t)(uintptr_t)%s, %s, %d, (const int64_t[]){", p, n,
            dtype_enum(tp->elem), tp->rank);
    for (int d = 0; d < tp->rank; d++) {
      if (tp->dimname[d]) fprintf(out, "%s%s", d ? ", " : "", c_name(a, tp->dimname[d]));
      else fprintf(out, "%s%lld", d ? ", " : "", (long long)tp->dims[d]);
    }
    fprintf(out, "%s});\n", tp->rank ? "" : "0");
    if (views) {
      const char *sn = strides_name(a, f, n);
      fprintf(out, "  for (int d = 0; %s && d < %d; d++) args[%d].tensor.strides[d] = %s[d];\n", sn, tp->rank, p, sn);
    }
  }
  fprintf(out, "  return phobos_launch(k, args, %d, stream);\n}\n", nuser);
}

void launcher_write(Arena *a, FILE *out, const char *source, Plan **plans, int nplans) {
  fprintf(out,
          "/* Typed launchers, generated by phobosc " PHOBOS_VERSION " from %s: two a kernel, each\n"
          " * checked by phobos_launch as any launch is. K_launch takes device pointers to\n"
          " * contiguous row-major data; K_launch_views the same, each followed by its\n"
          " * strides in elements (one a dim, as phobos_tensor's; NULL: contiguous), for\n"
          " * views of larger buffers (spec 16.3). A dim argument is the extent the\n"
          " * tensors share. */\n"
          "#pragma once\n#include <phobos.h>\n#include <stdint.h>\n",
          source);
  for (int i = 0; i < nplans;) {
    int j = i;
    while (j < nplans && plans[j]->f->info->kernel == plans[i]->f->info->kernel) j++;
    write_launcher(a, out, plans, i, j, false);
    write_launcher(a, out, plans, i, j, true);
    i = j;
  }
}
