/* driver.c: the pass order, written out once.
 *
 *   load -> lex -> parse -> check (every @autotune point)
 *   -> for each kernel and variant: check the variant -> lower to tile IR
 *      -> verify -> plan -> verify
 *   -> emit each plan as a PTX entry -> ptxas -> the cubin and its manifest
 *
 * --emit=STAGE stops after STAGE and prints what it produced. The output is
 * built in memory and written only when the run succeeds, so a failed run
 * leaves no partial file behind. */
#include "driver.h"
#include "cubin.h"
#include "launcher.h"
#include "manifest.h"
#include "ptx.h"
#include "plan/plan.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The entries that spill (cubin_spills) tallied by kernel: a kernel every
 * entry of which spills SPILL_WARN bytes a thread or more gets a warning, as
 * the autotuner cannot choose a variant that keeps its tiles in registers
 * (where one variant does, the others' spills cost nothing: the autotuner
 * times them). A few words (the GQA decode's 4 bytes) are ptxas's own
 * choice, not a tile that does not fit. */
enum { SPILL_WARN = 64 };
typedef struct Spills {
  int nplans;
  const char **entries; /* by plan: its entry */
  long *stores, *loads; /* by plan: what its entry spills, where SPILL_WARN bytes a thread or more; else 0 */
} Spills;

static void note_spill(const char *entry, int len, long stores, long loads, void *ctx) {
  Spills *sp = ctx;
  for (int i = 0; i < sp->nplans; i++)
    if (stores >= SPILL_WARN && (int)strlen(sp->entries[i]) == len && !strncmp(sp->entries[i], entry, (size_t)len))
      sp->stores[i] = stores, sp->loads[i] = loads;
}

static void warn_spills(Arena *a, Diags *d, Plan **plans, int nplans, const char *report) {
  Spills sp = {nplans, arena_alloc(a, sizeof(char *) * (size_t)nplans), arena_alloc(a, sizeof(long) * (size_t)nplans),
               arena_alloc(a, sizeof(long) * (size_t)nplans)};
  for (int i = 0; i < nplans; i++) sp.entries[i] = plan_entry_name(a, plans[i]), sp.stores[i] = sp.loads[i] = 0;
  cubin_spills(report, note_spill, &sp);
  /* each kernel once, at its first plan; its general-strides copy, which
   * runs only for strides no other variant takes, is not among the variants
   * the autotuner chooses from */
  for (int i = 0; i < nplans; i++) {
    if (plans[i]->general_strides) continue;
    const char *k = plans[i]->f->name;
    bool first = true, all = true;
    int least = i;
    for (int j = 0; j < nplans; j++) {
      if (strcmp(plans[j]->f->name, k) || plans[j]->general_strides) continue;
      first &= j >= i;
      all &= sp.stores[j] > 0;
      if (sp.stores[j] && sp.stores[j] < sp.stores[least]) least = j;
    }
    if (!first || !all) continue;
    fprintf(d->out,
            "phobosc: warning: every variant of kernel '%s' spills registers to local memory (ptxas: %s stores %ld "
            "bytes a thread and loads %ld): its register tiles likely hold more elements a thread than its thread "
            "count leaves registers for (65536 a CTA); fewer elements a thread (a smaller block, more threads, or a "
            "loop over the row) keep them in registers\n",
            k, sp.entries[least], sp.stores[least], sp.loads[least]);
    d->warnings++;
  }
}

/* The entries a ptxas refusal names: each "line N" of its messages maps
 * to the .entry whose code holds line N of the PTX. Drops those plans
 * from plans[0..*nplans) (compacted), each with a note under -v, unless
 * that would leave a kernel none: Phobos's autotuner skips a point that
 * fails to compile, and the kernel fails only when none compiles.
 * Returns how many were dropped. */
static int drop_refused(Arena *arena, Diags *d, const DriverOptions *o, const char *ptx, const char *msg, Plan **plans,
                        int *nplans) {
  /* the first line of each entry */
  int nent = 0;
  const char *names[4096];
  long first[4096];
  long line = 1;
  for (const char *p = ptx; *p && nent < 4096; line++) {
    if (!strncmp(p, ".visible .entry ", 16)) {
      const char *s = p + 16, *e = strchr(s, '(');
      names[nent] = e ? arena_printf(arena, "%.*s", (int)(e - s), s) : "";
      first[nent++] = line;
    }
    const char *nl = strchr(p, '\n');
    if (!nl) break;
    p = nl + 1;
  }
  bool *bad = arena_alloc(arena, (size_t)*nplans + 1);
  const char **why = arena_alloc(arena, sizeof(char *) * ((size_t)*nplans + 1));
  memset(bad, 0, (size_t)*nplans + 1);
  for (const char *l = msg; l && *l;) {
    const char *nl = strchr(l, '\n');
    int n = nl ? (int)(nl - l) : (int)strlen(l);
    const char *at = strstr(l, ", line ");
    if (at && at < l + n && strstr(l, "error")) {
      long ln = strtol(at + 7, NULL, 10);
      int e = -1;
      for (int i = 0; i < nent && first[i] <= ln; i++) e = i;
      for (int i = 0; e >= 0 && i < *nplans; i++)
        if (!bad[i] && !strcmp(plan_entry_name(arena, plans[i]), names[e]))
          bad[i] = true, why[i] = arena_printf(arena, "%.*s", n, l);
    }
    l += nl ? n + 1 : n;
  }
  /* a kernel keeps at least one entry, or nothing is dropped */
  for (int i = 0; i < *nplans; i++) {
    if (!bad[i]) continue;
    bool kept = false;
    for (int j = 0; j < *nplans && !kept; j++)
      kept = !bad[j] && plans[j]->f->info->kernel == plans[i]->f->info->kernel && !plans[j]->general_strides;
    if (!kept) return 0;
  }
  int w = 0, dropped = 0;
  for (int i = 0; i < *nplans; i++) {
    if (!bad[i]) {
      plans[w++] = plans[i];
      continue;
    }
    dropped++;
    if (o->verbose)
      fprintf(d->out, "phobosc: %s [%s] left out: ptxas refused its entry %s: %s\n", plans[i]->f->name,
              plan_func_str(arena, plans[i]), plan_entry_name(arena, plans[i]), why[i]);
  }
  *nplans = w;
  return dropped;
}

/* -o K.cubin: the PTX through ptxas into K.cubin, and K.yaml beside it.
 * The PTX is written beside the output first; it stays there when ptxas
 * fails, so the printed command reproduces the failure. Entries ptxas
 * refuses are left out and the rest assembled again (drop_refused), as
 * long as every kernel keeps one. */
static void write_cubin(Arena *arena, Diags *d, const DriverOptions *o, const Source *src, const char *ptx_in,
                        size_t ptx_len, Plan **plans, int nplans_in) {
  const char *cubin = o->output;
  size_t n = strlen(cubin);
  int stem = (int)(n > 6 && !strcmp(cubin + n - 6, ".cubin") ? n - 6 : n);
  const char *ptx_path = arena_printf(arena, "%.*s.ptx", stem, cubin);
  const char *yaml_path = arena_printf(arena, "%.*s.yaml", stem, cubin);
  const char *arch = o->arch ? o->arch : "sm_90a";
  int nplans = nplans_in;
  char *ptx_own = NULL; /* the module again, without the refused entries */
  const char *ptx = ptx_in;
  double t0 = now();
  char *report = NULL;
  for (int round = 0;; round++) {
    FILE *f = fopen(ptx_path, "wb");
    if (!f || fwrite(ptx, 1, ptx_len, f) != ptx_len || fclose(f) != 0) {
      diag_error(d, (Span){0}, "cannot write %s", ptx_path);
      free(ptx_own);
      return;
    }
    CubinRefusal refusal = {0};
    bool last = round == 8; /* a bound: each round leaves out at least one entry */
    if (cubin_assemble(ptx_path, cubin, arch, o->verbose, d->out, &report, last ? NULL : &refusal)) break;
    if (!refusal.msg || !drop_refused(arena, d, o, ptx, refusal.msg, plans, &nplans)) {
      if (refusal.msg) cubin_print_refusal(d->out, ptx_path, cubin, arch, &refusal); /* nothing to leave out */
      free(refusal.msg);
      d->errors++;
      free(ptx_own);
      return;
    }
    free(refusal.msg);
    free(ptx_own);
    ptx = ptx_own = ptx_emit_module(arena, d, plans, nplans, arch, &ptx_len);
    if (!ptx || d->errors) {
      free(ptx_own);
      return;
    }
  }
  free(ptx_own);
  if (o->verbose) fprintf(d->out, "phobosc: ptxas: %.1f ms\n", (now() - t0) * 1e3);
  warn_spills(arena, d, plans, nplans, report);
  free(report);
  unlink(ptx_path);
  FILE *y = fopen(yaml_path, "wb");
  char err[512] = "";
  const char *slash = strrchr(cubin, '/');
  if (!y || !manifest_write(y, src, o->arch ? o->arch : "sm_90a", slash ? slash + 1 : cubin, plans, nplans,
                            err, sizeof err)) {
    diag_error(d, (Span){0}, "cannot write the manifest %s%s%s", yaml_path, *err ? ": " : "", err);
    if (y) fclose(y);
    return;
  }
  if (fclose(y) != 0) diag_error(d, (Span){0}, "cannot write the manifest %s", yaml_path);
}

/* The whole of a file phobosc wrote into the arena; NULL when it cannot
 * be read. */
static unsigned char *read_whole(Arena *arena, const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  long n = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  unsigned char *buf = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? arena_alloc(arena, (size_t)n + 1) : NULL;
  bool ok = buf && fread(buf, 1, (size_t)n, f) == (size_t)n;
  if (f) fclose(f);
  return ok ? (*len = (size_t)n, buf) : NULL;
}

/* --emit=c -o K.c: the module as data. The cubin is assembled in a
 * directory of its own (K.cubin and K.yaml there, removed after), and
 * K.c holds both as arrays and a function K_module_load (K the file's
 * stem, made an identifier) that loads them with phobos_module_load_image,
 * so that a program needs no files at run time. */
static void write_c(Arena *arena, Diags *d, const DriverOptions *o, const Source *src, const char *ptx, size_t ptx_len,
                    Plan **plans, int nplans) {
  const char *base = strrchr(o->output, '/');
  base = base ? base + 1 : o->output;
  size_t n = strlen(base);
  int stem = (int)(n > 2 && !strcmp(base + n - 2, ".c") ? n - 2 : n);
  char *id = arena_printf(arena, "%s%.*s", stem && isdigit((unsigned char)base[0]) ? "_" : "", stem, base);
  for (char *c = id; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_') *c = '_';
  if (!*id) id = "phobos";
  const char *tmp = getenv("TMPDIR");
  char *dir = arena_printf(arena, "%s/phobosc_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    diag_error(d, (Span){0}, "cannot make a directory for the cubin under %s: %s", tmp && *tmp ? tmp : "/tmp",
               strerror(errno));
    return;
  }
  DriverOptions co = *o;
  co.output = arena_printf(arena, "%s/%s.cubin", dir, id);
  const char *yaml = arena_printf(arena, "%s/%s.yaml", dir, id);
  write_cubin(arena, d, &co, src, ptx, ptx_len, plans, nplans);
  size_t clen = 0, ylen = 0;
  unsigned char *cubin = d->errors ? NULL : read_whole(arena, co.output, &clen);
  unsigned char *manifest = d->errors ? NULL : read_whole(arena, yaml, &ylen);
  unlink(co.output);
  unlink(yaml);
  rmdir(dir);
  if (d->errors) return;
  if (!cubin || !manifest) {
    diag_error(d, (Span){0}, "cannot read back the cubin and manifest from %s", dir);
    return;
  }
  FILE *f = fopen(o->output, "wb");
  if (!f) {
    diag_error(d, (Span){0}, "cannot write %s: %s", o->output, strerror(errno));
    return;
  }
  fprintf(f,
          "/* %s: generated by phobosc " PHOBOS_VERSION " from %s. The module's cubin (%zu bytes) and\n"
          " * manifest as data; %s_module_load loads them, as phobos_module_load loads\n"
          " * the files:\n"
          " *   phobos_status %s_module_load(phobos_context *ctx, phobos_module **out); */\n"
          "#include <phobos.h>\n\n"
          "static const unsigned char %s_cubin[%zu] = {",
          base, src->name ? src->name : "<stdin>", clen, id, id, id, clen);
  for (size_t i = 0; i < clen; i++) fprintf(f, "%s%u,", i % 20 ? "" : "\n  ", cubin[i]);
  fprintf(f, "\n};\n\nstatic const char %s_manifest[] =", id);
  for (size_t i = 0; i < ylen;) { /* a string a line, escaped */
    fputs("\n  \"", f);
    for (; i < ylen; i++) {
      unsigned char c = manifest[i];
      if (c == '\n') {
        fputs("\\n", f);
        i++;
        break;
      }
      if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
      else if (c < 32 || c > 126) fprintf(f, "\\%03o", c);
      else fputc(c, f);
    }
    fputc('"', f);
  }
  fprintf(f,
          ";\n\nphobos_status %s_module_load(phobos_context *ctx, phobos_module **out);\n"
          "phobos_status %s_module_load(phobos_context *ctx, phobos_module **out) {\n"
          "  return phobos_module_load_image(ctx, %s_cubin, sizeof %s_cubin, %s_manifest, sizeof %s_manifest - 1, out);\n"
          "}\n",
          id, id, id, id, id, id);
  if (fclose(f) != 0) diag_error(d, (Span){0}, "cannot write %s", o->output);
}

static unsigned plan_flags(const DriverOptions *o) {
  return (o->no_tma ? PLAN_NO_ASYNC : 0) | (o->producer_warp ? PLAN_PRODUCER_WARP : 0) | (o->prefetch ? PLAN_PREFETCH : 0) |
         (o->no_tensor_copies ? PLAN_NO_TENSOR_COPIES : 0) | (o->no_wgmma ? PLAN_NO_WGMMA : 0) |
         (o->no_defer ? PLAN_NO_DEFER : 0) | (o->late_waits ? PLAN_LATE_WAITS : 0) | (o->no_l2pf ? PLAN_NO_L2PF : 0) |
         (o->early_pf ? PLAN_EARLY_PF : 0) |
         (o->no_skip ? PLAN_NO_SKIP : 0) | (o->no_walk_skip ? PLAN_NO_WALK_SKIP : 0) |
         (o->l2_hints < 0 ? PLAN_NO_L2_HINTS : 0) |
         (o->shift_walk ? PLAN_SHIFT_WALK : 0) | (o->row_broadcasts ? PLAN_ROW_BROADCASTS : 0) |
         (o->l2_hints == 2 ? PLAN_L2_HINT_STORES : 0) |
         (o->l2_keep_eighths ? (unsigned)(8 - o->l2_keep_eighths) << PLAN_L2_KEEP_SHIFT : 0);
}

/* Staged-rows copies (--staged-rows) need sm_90a's bulk copies and
 * transaction-counting mbarriers. */
static bool staged_arch(const char *arch) { return !arch || !strcmp(arch, "sm_90a"); }

int driver_variant_copies(Arena *a, Diags *d, const KernelInfo *info, const char *arch, unsigned plan_flags,
                          bool onepass, bool staged, Plan *out[DRIVER_MAX_COPIES]) {
  TirFunc *copy[DRIVER_MAX_COPIES] = {onepass ? onepass_variant(a, d, info, 1) : NULL,
                                      onepass ? onepass_variant(a, d, info, 2) : NULL,
                                      staged && staged_arch(arch) ? staged_variant(a, d, info) : NULL};
  int n = 0;
  for (int c = 0; c < DRIVER_MAX_COPIES; c++) {
    Diags quiet = *d;
    quiet.silent = true, quiet.errors = quiet.warnings = 0;
    Plan *p = copy[c] ? plan_kernel(a, &quiet, copy[c], arch, plan_flags) : NULL;
    if (p && !quiet.errors && (!copy[c]->staged || staged_plan_ok(p)) && tir_verify(d, copy[c], "planning"))
      out[n++] = p;
  }
  return n;
}

Plan *driver_odd_rows_plan(Arena *a, Diags *d, const KernelInfo *info, const Plan *p, uint64_t odd, const char *arch,
                           unsigned plan_flags) {
  /* a staged-rows copy reads its rows from shared memory: vectors serve;
   * and a plan with no tile to narrow is its own odd-rows plan (not
   * lowered and planned again only to be dropped) */
  if (p->f->staged || !odd || !plan_odd_rows_narrow(p, odd)) return NULL;
  TirFunc *f = p->f->once_dim ? onepass_variant(a, d, info, p->f->once_blocks) : lower_kernel(a, d, info);
  Diags quiet = *d;
  quiet.silent = true, quiet.errors = quiet.warnings = 0;
  Plan *q = f ? plan_kernel_rows(a, &quiet, f, arch, plan_flags, odd) : NULL;
  return q && !quiet.errors && q->odd_rows && tir_verify(d, f, "planning") ? q : NULL;
}

static bool has_dot(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if (in->op == TIR_DOT || has_dot(&in->cond) || has_dot(&in->body) || has_dot(&in->body2)) return true;
  }
  return false;
}

Plan *driver_general_copy(Arena *a, Diags *d, const Plan *first, const char *arch, unsigned plan_flags) {
  /* a dot's operands are tiles staged for the tensor cores: element by
   * element into shared memory they would run at a small fraction of the
   * kernel's speed, and such an entry spills (the GQA decode's: 2366 local
   * accesses, 12-05b call 5). A transposed operand wants its own tile path,
   * not this one: such kernels take inner-contiguous tensors only. */
  if (has_dot(&first->f->body)) return NULL;
  TirFunc *f = lower_kernel(a, d, first->f->info);
  Diags quiet = *d;
  quiet.silent = true, quiet.errors = quiet.warnings = 0;
  Plan *p = f ? plan_kernel(a, &quiet, f, arch, plan_flags | PLAN_GENERAL_STRIDES) : NULL;
  return p && !quiet.errors && tir_verify(d, f, "planning") ? p : NULL;
}

Plan *driver_specialized_copy(Arena *a, Diags *d, const Plan *p, const char *arch, unsigned plan_flags) {
  if (p->specialized || p->producer || !p->stages || p->f->staged || p->general_strides || !staged_arch(arch))
    return NULL;
  bool ring = false; /* a staged ring filled by tensor copies: else nothing to specialize, nothing lowered again */
  for (int i = 0; i < p->nbufs && !ring; i++)
    ring = p->bufs[i]->stages && p->bufs[i]->owner->plan->tma;
  if (!ring) return NULL;
  const KernelInfo *info = p->f->info;
  TirFunc *f = p->f->once_dim ? onepass_variant(a, d, info, p->f->once_blocks) : lower_kernel(a, d, info);
  Diags quiet = *d;
  quiet.silent = true, quiet.errors = quiet.warnings = 0;
  Plan *q = f ? plan_kernel(a, &quiet, f, arch, plan_flags | PLAN_SPECIALIZE) : NULL;
  return q && !quiet.errors && q->specialized && tir_verify(d, f, "planning") ? q : NULL;
}

Plan *driver_aligned_copy(Arena *a, Diags *d, const Plan *p, const char *arch) {
  uint64_t odd = 0;
  if (p->aligned_copy || !ptx_odd_row_params(a, d, p, arch ? arch : "sm_90a", &odd) || !odd) return NULL;
  Plan *q = arena_alloc(a, sizeof *q);
  *q = *p; /* the emitter reads a plan, never writes it: the copy may share its parts */
  q->aligned_copy = true, q->aligned_params = odd;
  return q;
}

/* The occupancy copy of a plan: the same variant with `.minnctapersm` set
 * so that 2048 threads fit an SM (2048 / threads CTAs: 32 registers a
 * thread), for kernels without a dot whose register tiles hold at most
 * OCC_TILE_MAX elements a thread and whose @launch bounds nothing. ptxas
 * otherwise spends registers on issuing a thread's loads ahead (a SwiGLU
 * port of 16 elements a thread took 64 registers, half the SM's threads),
 * where a memory-bound kernel may gain more from twice the threads in
 * flight. The copy is lowered as if @launch gave the bound: its register
 * budget (remat.c, strip.c) is 32, so a tile of 32 elements a thread runs
 * in strips (the SwiGLU port over 4096 x 14336 at 512 threads: a copy of
 * the plan spilled, 587 us; lowered with the budget, 241 us; device calls
 * 5 and 7 of 12-04b); where that changes nothing the plan is copied. Either may be faster:
 * the copy is an entry of its own (NAME__vN..._occ) that the autotuner
 * times beside the plan. NULL where the plan does not qualify (and for
 * staged plans). An odd-rows plan qualifies: the odd-pitch transpose's
 * (one element a lane, 16 a thread) took 36 registers, 6 CTAs an SM of 8,
 * its warps stalled on loads with 71% of them active (12-06f call 1). */
enum { OCC_TILE_MAX = 32, OCC_SM_THREADS = 2048, OCC_SM_CTAS = 32, OCC_SM_SHARED = 200 * 1024 };
Plan *driver_occupancy_copy(Arena *a, Diags *d, const Plan *p, const char *arch, unsigned plan_flags) {
  const KernelInfo *info = p->f->info;
  int k = p->launch_threads > 0 ? OCC_SM_THREADS / p->launch_threads : 0;
  if (k > OCC_SM_CTAS) k = OCC_SM_CTAS; /* ptxas ignores a larger .minnctapersm (and so bounds nothing) */
  int64_t most = plan_most_blocked_regs(p);
  if (p->occ_blocks || p->specialized || k < 2 || info->min_blocks || info->max_regs || p->f->staged ||
      !early_loads_wanted(p->f) || most == 0 || most > OCC_TILE_MAX || plan_launch_shared(p) * k > OCC_SM_SHARED)
    return NULL;
  KernelInfo *bounded = arena_alloc(a, sizeof *bounded);
  *bounded = *info;
  bounded->min_blocks = k;
  TirFunc *f = p->f->once_dim ? onepass_variant(a, d, bounded, p->f->once_blocks) : lower_kernel(a, d, bounded);
  if (!f) return NULL;
  Plan *q;
  if (f->ninsts == p->f->ninsts) { /* the budget cut nothing: the same IR */
    q = arena_alloc(a, sizeof *q);
    *q = *p; /* the emitter reads a plan, never writes it: the copy may share its parts */
  } else {
    Diags quiet = *d;
    quiet.silent = true, quiet.errors = quiet.warnings = 0;
    /* an odd-rows plan again with one element a chunk for the same tensors */
    q = plan_kernel_rows(a, &quiet, f, arch, plan_flags, p->odd_rows ? p->scalar_params : 0);
    if (!q || quiet.errors || q->odd_rows != p->odd_rows || !tir_verify(d, f, "planning")) return NULL;
    if (p->aligned_copy) {
      q = driver_aligned_copy(a, d, q, arch);
      if (!q) return NULL;
    }
  }
  q->occ_blocks = k;
  return q;
}

/* The cluster-rows copy of a plan (src/cluster.c, spec 15.22): the same
 * plan emitted with each row block taken by a cluster of `ctas` CTAs, its
 * loops over the row dim split among them. sm_90a only (clusters and
 * distributed shared memory); NULL where the plan does not qualify. */
Plan *driver_cluster_copy(Arena *a, const Plan *p, int ctas, const char *arch) {
  const char *dim;
  int64_t step;
  uint64_t apart;
  if (!staged_arch(arch) || !cluster_rows_ok(p, &dim, &step, &apart)) return NULL;
  Plan *q = arena_alloc(a, sizeof *q);
  *q = *p; /* the emitter reads a plan, never writes it: the copy may share its parts */
  q->cluster = ctas, q->cluster_dim = dim, q->cluster_step = step, q->cluster_apart = apart;
  return q;
}

int driver_cluster_copies(Arena *a, const Plan *p, const char *arch, Plan *out[2]) {
  int n = 0;
  for (int ctas = DRIVER_CLUSTER_LEAST; ctas <= 2 * DRIVER_CLUSTER_LEAST; ctas *= 2) {
    Plan *cl = driver_cluster_copy(a, p, ctas, arch);
    if (cl) out[n++] = cl;
  }
  return n;
}

/* Drops from plans the variants of one kernel (each with its copies: the
 * plans of variant v are [start[v], start[v + 1])) that another variant
 * dominates, so that the autotuner never times them and ptxas never builds
 * them:
 * - blocked values of more than TUNED_BLOCKED_MAX registers a thread
 *   (most[v], from plan_most_blocked_regs), when some variant of the kernel
 *   holds at most that: such a tile leaves ptxas too few registers for what
 *   is live beside it, so the variant spills or runs one CTA an SM (slower
 *   wherever timed, bench/README.md), and its ptxas run is most of the
 *   build's time (512 unrolled elements a thread: 71 s);
 * - tensor-core dots whose results go through shared memory every time
 *   (xmma[v] > 0, from plan_mma_exchanges: the tile has fewer rows than the
 *   warps' fragments cover, so it is laid out flat and exchanged), when
 *   some variant keeps all its tensor-core dots in fragments (xmma 0): the
 *   GEMM example's BM 64 points at 256 threads ran 40-76 TFLOP/s where its
 *   BM 128 points ran 540-690 (H100, 12-06d call 1).
 * -v and --emit=plan say which were left out; --all-variants keeps them. */
enum { TUNED_BLOCKED_MAX = 64 };
static void drop_dominated(Arena *a, PtrVec *plans, const int *start, const int64_t *most, const int *xmma, int n,
                           bool say, FILE *note) {
  bool small = false, frags = false;
  for (int v = 0; v < n; v++) small |= most[v] >= 0 && most[v] <= TUNED_BLOCKED_MAX; /* -1: left out already */
  /* a variant keeping its dots in fragments counts only where the first
   * rule keeps it: else the two could leave out every variant (one in
   * fragments with a large tile, one with small tiles and a flat dot) */
  for (int v = 0; v < n; v++) frags |= most[v] >= 0 && !(small && most[v] > TUNED_BLOCKED_MAX) && xmma[v] == 0;
  int w = start[0];
  for (int v = 0; v < n; v++) {
    bool big = small && most[v] > TUNED_BLOCKED_MAX, flat = frags && xmma[v] > 0;
    if (big || flat) {
      if (say) {
        const Plan *p = plans->items[start[v]];
        if (big)
          fprintf(note, "phobosc: %s [%s] left out: a blocked register tile of %lld elements a thread (the variants "
                        "kept hold at most %d; --all-variants keeps it)\n",
                  p->f->name, tir_func_str(a, p->f), (long long)most[v], TUNED_BLOCKED_MAX);
        else
          fprintf(note, "phobosc: %s [%s] left out: %d tensor-core dot%s exchanged through shared memory (fewer rows "
                        "than the warps' fragments cover), where other variants keep them in fragments; "
                        "--all-variants keeps it\n",
                  p->f->name, tir_func_str(a, p->f), xmma[v], xmma[v] == 1 ? "'s result" : "s' results");
      }
      continue;
    }
    for (int i = start[v]; i < start[v + 1]; i++) plans->items[w++] = plans->items[i];
  }
  plans->len = w;
}

/* Whether the planner deferred every reduction tileacc.c made of a tile
 * accumulator's update in a loop (plan/deferred.c: each thread folds its
 * own elements, the row meets once after the loop). One it did not defer
 * reduces in full every iteration, through shared memory where the row
 * spans warps: the LLM example's read_roof ([4, 1024] i32 summed over
 * rows, then rowsum(transpose(rowsum(acc)))), whose row value the planner
 * laid out flat for the transpose after the loop, read its weights at 0.13
 * TB/s against 3 TB/s before (12-06b, H100). Such a kernel is planned again
 * keeping its tile accumulators. */
static bool tile_accs_deferred(const Plan *p) {
  for (int i = 0; i < p->f->ninsts; i++) {
    const TirInst *x = p->f->insts[i];
    if (x && x->op == TIR_REDUCE && x->tileacc_update && !x->plan->partial) return false;
  }
  return true;
}

/* Every variant of every kernel, one pass a line: check the variant, lower,
 * verify, plan (which decides everything the backend spells, retrying
 * without tensor copies when they do not fit), verify, emit, write. */
static void compile_variants(Arena *arena, Diags *d, const Source *src, Node *program, SemaOptions *so,
                             const DriverOptions *o, FILE *out) {
  PtrVec plans = {0};
  for (int k = 0; k < program->list.len && !d->errors; k++) {
    Node *kernel = program->list.items[k];
    int n = sema_variant_count(arena, d, kernel, so);
    int *start = n > 0 ? arena_alloc(arena, sizeof *start * (size_t)(n + 1)) : NULL;
    int64_t *most = n > 0 ? arena_alloc(arena, sizeof *most * (size_t)n) : NULL;
    int *xmma = n > 0 ? arena_alloc(arena, sizeof *xmma * (size_t)n) : NULL;
    int planned = 0, nfit = 0, first_bad = -1, least_v = -1;
    int64_t least_need = -1;
    for (int v = 0; v < n && !d->errors; v++) {
      KernelInfo *info = arena_alloc(arena, sizeof *info);
      /* a point a @requires over constants rules out is left out (spec 11.2) */
      if (!sema_point_feasible(arena, d, kernel, so, v)) {
        start[v] = plans.len, planned = v + 1, most[v] = -1, xmma[v] = -1;
        if (o->verbose || o->emit == EMIT_PLAN)
          fprintf(o->emit == EMIT_PLAN ? out : d->out, "phobosc: %s: @autotune point %d of %d left out: a @requires "
                  "contract over its constants is false there\n", kernel->name, v + 1, n);
        continue;
      }
      if (!sema_check_variant(arena, d, kernel, so, v, info)) break;
      info->keep_tile_accs = o->no_defer;
      TirFunc *f = lower_kernel(arena, d, info);
      if (!f || !tir_verify(d, f, "lowering")) break;
      if (o->emit == EMIT_TIR) {
        tir_print(out, f);
        for (int blocks = 1; blocks <= 2 && !o->no_onepass; blocks++) {
          TirFunc *once = onepass_variant(arena, d, info, blocks);
          if (once) tir_print(out, once);
        }
        TirFunc *st = o->staged_rows && staged_arch(o->arch) ? staged_variant(arena, d, info) : NULL;
        if (st) tir_print(out, st);
        continue;
      }
      /* a point whose plan does not fit (shared memory, the backend's
       * limits) is left out, as Phobos's autotuner skips what fails to
       * compile; the kernel is an error only when no point fits (below) */
      char *why = NULL;
      size_t why_len = 0;
      Diags quiet = *d;
      quiet.errors = quiet.warnings = 0, quiet.plain = true, quiet.max_errors = 0, quiet.stopped = false;
      quiet.out = open_memstream(&why, &why_len);
      if (!quiet.out) diag_ice("cannot open a diagnostics buffer");
      Plan *p = plan_kernel(arena, &quiet, f, o->arch, plan_flags(o));
      if (p && !quiet.errors && !tile_accs_deferred(p)) {
        KernelInfo *kept = arena_alloc(arena, sizeof *kept);
        *kept = *info;
        kept->keep_tile_accs = true;
        Diags q2 = *d;
        q2.silent = true, q2.errors = q2.warnings = 0;
        TirFunc *g = lower_kernel(arena, &q2, kept);
        Plan *pk = g && !q2.errors && tir_verify(&q2, g, "lowering") ? plan_kernel(arena, &q2, g, o->arch, plan_flags(o)) : NULL;
        /* the plan with its tiles where it fits (else the rewritten one);
         * the variant's copies (one-pass, odd-rows, occupancy) lower from
         * the same info, so they keep them too */
        if (pk && !q2.errors) f = g, p = pk, info = kept;
      }
      fclose(quiet.out);
      start[v] = plans.len, planned = v + 1;
      if (!p || quiet.errors) {
        most[v] = -1, xmma[v] = -1; /* no plans: drop_dominated passes it by */
        if (f->shared_need > 0 && (least_need < 0 || f->shared_need < least_need)) least_need = f->shared_need, least_v = v;
        if (first_bad < 0) first_bad = v;
        if (o->verbose || o->emit == EMIT_PLAN) {
          char *nl = why ? strchr(why, '\n') : NULL;
          if (nl) *nl = 0;
          fprintf(o->emit == EMIT_PLAN ? out : d->out, "phobosc: %s [%s] left out: %s\n", f->name, tir_func_str(arena, f),
                  why && *why ? why : "its plan failed");
        }
        free(why);
        continue;
      }
      free(why);
      if (!tir_verify(d, f, "planning")) break;
      nfit++;
      most[v] = plan_most_blocked_regs(p);
      xmma[v] = plan_mma_exchanges(p);
      if (f->strip_widest > most[v]) most[v] = f->strip_widest; /* as written (strip.c) */
      vec_push(arena, &plans, p);
      /* rows that fit one block: the same variant reading them once; rows
       * that fit shared memory (--staged-rows): reading them from a copy
       * made once. Both optional: one the planner refuses (a one-pass
       * copy's loads issued early may not fit the shared-memory budget) is
       * left out, not an error */
      Plan *copies[1 + DRIVER_MAX_COPIES] = {p};
      int nc = 1 + driver_variant_copies(arena, d, info, o->arch, plan_flags(o), !o->no_onepass, o->staged_rows, copies + 1);
      for (int c = 1; c < nc; c++) vec_push(arena, &plans, copies[c]);
      /* each of those without its odd-pitch row paths, for aligned rows */
      for (int c = 0; c < nc && !o->no_aligned_rows; c++) {
        Plan *al = driver_aligned_copy(arena, d, copies[c], o->arch);
        if (!al) continue;
        vec_push(arena, &plans, al);
        /* and for rows that are not, the plan that takes one element a
         * chunk where a warp spans several rows of those tensors */
        Plan *odd = o->vector_odd_rows ? NULL
                                      : driver_odd_rows_plan(arena, d, info, copies[c], al->aligned_params, o->arch,
                                                             plan_flags(o));
        if (odd) plans.items[start[v] + c] = odd;
      }
      /* --warp-specialize: each with a tensor-copy ring again with a producer warpgroup */
      for (int c = 0; c < nc && o->specialize; c++) {
        Plan *ws = driver_specialized_copy(arena, d, copies[c], o->arch, plan_flags(o));
        if (ws) vec_push(arena, &plans, ws);
      }
      /* and each plan of the variant again with an occupancy bound */
      for (int c = start[v], end = plans.len; c < end && !o->no_occupancy; c++) {
        Plan *oc = driver_occupancy_copy(arena, d, plans.items[c], o->arch, plan_flags(o));
        if (oc) vec_push(arena, &plans, oc);
      }
      /* and the variant's plans for long rows, a row block a cluster of
       * 4 or 8 CTAs (its occupancy copies and one-pass copies do not
       * qualify; of 2, they measured no faster than 4 in 12-05f call 4) */
      for (int c = start[v], end = plans.len; c < end && !o->no_cluster; c++) {
        Plan *cl[2];
        for (int k = 0, n = driver_cluster_copies(arena, plans.items[c], o->arch, cl); k < n; k++)
          vec_push(arena, &plans, cl[k]);
      }

    }
    /* no point fits: the errors of the one that needs the least shared
     * memory (else the first), planned again to report them */
    if (!d->errors && planned > 0 && !nfit && o->emit != EMIT_TIR) {
      int v = least_v >= 0 ? least_v : first_bad;
      KernelInfo *info = arena_alloc(arena, sizeof *info);
      if (sema_check_variant(arena, d, kernel, so, v, info)) {
        info->keep_tile_accs = o->no_defer;
        TirFunc *f = lower_kernel(arena, d, info);
        if (f && !plan_kernel(arena, d, f, o->arch, plan_flags(o)) && !d->errors)
          diag_error(d, kernel->span, "kernel '%s': no @autotune point fits", kernel->name);
        if (n > 1) diag_note(d, kernel->span, "none of its %d points fits; this one needs the least", n);
      }
    }
    if (!d->errors && planned > 1 && !o->all_variants) {
      start[planned] = plans.len;
      drop_dominated(arena, &plans, start, most, xmma, planned, o->verbose || o->emit == EMIT_PLAN,
                     o->emit == EMIT_PLAN ? out : d->out);
    }
    /* the first variant kept, once more for tensors whose last dim is not
     * contiguous: element by element at every dim's stride */
    if (!d->errors && planned > 0 && plans.len > start[0] && !o->no_general_strides) {
      Plan *gs = driver_general_copy(arena, d, plans.items[start[0]], o->arch, plan_flags(o));
      if (gs) vec_push(arena, &plans, gs);
    }
  }
  if (d->errors) return;
  if (o->emit == EMIT_PLAN || o->emit == EMIT_PLAN_YAML) {
    for (int i = 0; i < plans.len; i++) {
      if (o->emit == EMIT_PLAN) plan_print(out, plans.items[i]);
      else plan_print_yaml(out, plans.items[i]);
    }
    return;
  }
  if (o->emit == EMIT_HEADER) {
    launcher_write(arena, out, src->name ? src->name : "<stdin>", (Plan **)plans.items, plans.len);
    return;
  }
  if (o->emit != EMIT_MANIFEST && o->emit != EMIT_PTX && o->emit != EMIT_CUBIN && o->emit != EMIT_C)
    return; /* a plain check */
  /* the PTX module: every variant of every kernel as its own entry */
  double t0 = now();
  const char *arch = o->arch ? o->arch : "sm_90a";
  size_t ptx_len = 0;
  char *ptx = ptx_emit_module(arena, d, (Plan *const *)plans.items, plans.len, arch, &ptx_len);
  if (o->verbose)
    fprintf(stderr, "phobosc: PTX for %d variant%s: %.2f ms\n", plans.len, plans.len == 1 ? "" : "s", (now() - t0) * 1e3);
  if (!d->errors) {
    const char *base = o->input ? strrchr(o->input, '/') : NULL;
    const char *name = base ? base + 1 : o->input ? o->input : "kernel.ph";
    size_t n = strlen(name);
    int stem = (int)(n > 3 && !strcmp(name + n - 3, ".ph") ? n - 3 : n);
    if (o->emit == EMIT_PTX) {
      fwrite(ptx, 1, ptx_len, out);
    } else if (o->emit == EMIT_MANIFEST) {
      char err[512] = "";
      if (!manifest_write(out, src, arch, arena_printf(arena, "%.*s.cubin", stem, name), (Plan **)plans.items,
                          plans.len, err, sizeof err))
        diag_ice("%s", err);
    } else if (o->emit == EMIT_C) {
      write_c(arena, d, o, src, ptx, ptx_len, (Plan **)plans.items, plans.len);
    } else {
      write_cubin(arena, d, o, src, ptx, ptx_len, (Plan **)plans.items, plans.len);
    }
  }
  free(ptx);
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

static int compile_source(const DriverOptions *o, const Source *src_in, FILE *out, FILE *err) {
  Arena *arena = arena_new();
  Source src = *src_in;
  Diags diags;
  diag_init(&diags, &src, err, o->plain);
  diags.max_errors = o->max_errors;

  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) diag_ice("cannot open an output buffer");

  if (src.len > MAX_SOURCE_BYTES) { /* source_load refuses these; a caller's own source too */
    diag_error(&diags, (Span){0}, "the source is %zu bytes; phobosc reads at most %d (1 MiB)", src.len, MAX_SOURCE_BYTES);
  } else if (o->emit == EMIT_TOKENS) {
    lex_dump_tokens(arena, &diags, &src, mem);
  } else {
    Node *program = parse_program(arena, &diags, &src);
    if (program) {
      SemaOptions so = {.defines = o->defines, .ndefines = o->ndefines, .max_variants = o->max_variants ? o->max_variants : 4096,
                        .warn_narrowing = o->warn_narrowing};
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

/* The passes after the parser recurse over expressions (a sum of 100,000
 * terms is 100,000 levels) and nested statements, within the bounds the
 * parser checks (spec 13.3). They run on a thread with a stack of its own,
 * large enough for those bounds with room to spare (under AddressSanitizer
 * too); only what is used is committed. The thread has an alternate signal
 * stack, so that a crash there still reaches phobosc's fatal-signal
 * handler, which reports an internal error. */
enum { DRIVER_STACK = 256 << 20, DRIVER_SIGNAL_STACK = 64 << 10 };

typedef struct Job {
  const DriverOptions *o;
  const Source *src;
  FILE *out, *err;
  int status;
} Job;

static void *run_job(void *arg) {
  Job *j = arg;
  stack_t ss = {0}, cur;
  bool alt = false; /* one of its own unless the thread has one (a sanitizer's) */
  if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
    ss = (stack_t){.ss_sp = malloc(DRIVER_SIGNAL_STACK), .ss_size = DRIVER_SIGNAL_STACK};
    alt = ss.ss_sp && sigaltstack(&ss, NULL) == 0;
  }
  j->status = compile_source(j->o, j->src, j->out, j->err);
  if (alt) {
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
  }
  free(ss.ss_sp);
  return NULL;
}

int driver_compile_source(const DriverOptions *o, const Source *src, FILE *out, FILE *err) {
  Job j = {.o = o, .src = src, .out = out, .err = err};
  pthread_attr_t attr;
  pthread_t t;
  bool ok = pthread_attr_init(&attr) == 0;
  if (ok && pthread_attr_setstacksize(&attr, DRIVER_STACK) == 0 && pthread_create(&t, &attr, run_job, &j) == 0) {
    pthread_join(t, NULL);
  } else {
    run_job(&j); /* no thread to be had: on this one's stack */
  }
  if (ok) pthread_attr_destroy(&attr);
  return j.status;
}
