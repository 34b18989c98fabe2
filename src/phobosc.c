/* phobosc.c: the command line. The passes themselves run in driver.c.
 *
 * Exit status: 0 success, 1 errors in the source, 2 usage errors, 4 an
 * internal compiler error (never a signal: see on_fatal_signal). */
#include "driver.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_USAGE = DRIVER_USAGE, EXIT_ICE = DRIVER_ICE, MAX_DEFINES = 64 };

typedef struct Options {
  DriverOptions d;
  Define defines[MAX_DEFINES];
} Options;

static const char usage_text[] =
    "Usage: phobosc [options] FILE.ph\n"
    "\n"
    "Compiles a phobos kernel file. With -o FILE.cubin, writes the cubin (every\n"
    "@autotune variant an entry, assembled by ptxas) and FILE.yaml beside it, the\n"
    "manifest libphobos reads. Without --emit or a .cubin output, checks FILE\n"
    "(syntax, names, types, shapes and attributes under every @autotune point,\n"
    "then lowers and plans every variant) and writes nothing.\n"
    "FILE may be '-' for standard input; at most 1 MiB is read.\n"
    "\n"
    "The manifest gives each variant's launch grid: its @grid, or for a kernel\n"
    "without @grid the grid its slices imply (a store Y[ctx.block.x * BM :+ BM]\n"
    "into a dim of M: cdiv(M, BM) blocks; a block index it cannot follow is an\n"
    "error that asks for @grid), and the kernel's @requires contracts, which\n"
    "libphobos checks before each launch.\n"
    "\n"
    "Options:\n"
    "  -o FILE              write the output to FILE ('-': standard output, the default)\n"
    "  -D NAME=VALUE        define the constant NAME (an integer or a float); it\n"
    "                       overrides an @autotune list of the same name\n"
    "  --arch=ARCH          target: sm_90a (default) or sm_80\n"
    "  --no-tma             no asynchronous copies: @pipeline loops and staged tiles\n"
    "                       load with the threads' own loads (to compare the two)\n"
    "  --producer-warp      experimental: a @pipeline loop's copies issued by a warp\n"
    "                       of their own\n"
    "  --prefetch           experimental: loops load their register tiles one\n"
    "                       iteration ahead\n"
    "  --no-tensor-copies   staged tiles by cp.async and the threads' own loads, not\n"
    "                       TMA tensor copies (the sm_90a default where the plan\n"
    "                       allows; to compare the two)\n"
    "  --no-wgmma           tensor-core dots by mma.sync, not wgmma (the sm_90a\n"
    "                       default for dots on tensor copies' tiles; to compare)\n"
    "  --late-waits         experimental: a wgmma group runs on past the register\n"
    "                       work after it, waited for at the first instruction\n"
    "                       that reads its result, not at its issue\n"
    "  --no-deferred-reductions\n"
    "                       every row reduction in a loop meets across its row's\n"
    "                       threads each iteration: by default a loop's running\n"
    "                       sum, max or online logsumexp of rows stays within\n"
    "                       each thread and its threads meet once, after the loop,\n"
    "                       and a tile accumulator that only a reduction after its\n"
    "                       loop reads is such a running value where the planner\n"
    "                       can defer it (to compare)\n"
    "  --no-one-pass        no one-pass copies: by default a variant whose loops\n"
    "                       walk one dim in constant steps and load the same tile\n"
    "                       in two of them gains a copy for launches where the dim\n"
    "                       is at most the step, the loops unrolled and the tile\n"
    "                       loaded once (an entry NAME__vK_once), and one for\n"
    "                       launches where it is within two steps (NAME__vK_twice)\n"
    "  --no-aligned-rows    no aligned-rows copies: by default a variant with a path\n"
    "                       for rows that are not 16-byte aligned gains a copy\n"
    "                       without it, for launches whose rows are (an entry\n"
    "                       NAME__vK_al: that path's registers cost every thread)\n"
    "  --vector-odd-rows    no odd-rows plans: by default the entry for rows that\n"
    "                       are not 16-byte aligned (beside NAME__vK_al) is planned\n"
    "                       with one element a chunk for those tensors where a warp\n"
    "                       spans several rows, lanes reading consecutive elements\n"
    "                       with no shifts (A/B runs)\n"
    "  --no-occupancy-copies\n"
    "                       no occupancy copies: by default a variant without a\n"
    "                       dot whose register tiles hold at most 32 elements a\n"
    "                       thread, and whose @launch gives no bounds, gains a copy\n"
    "                       with .minnctapersm set for 2048 threads an SM (32\n"
    "                       registers a thread; at most 32 CTAs), an entry\n"
    "                       NAME__vK_occ that the autotuner times beside it\n"
    "  --no-cluster-rows    no cluster-rows copies: by default on sm_90a a row\n"
    "                       kernel whose loops over the row dim carry deferred\n"
    "                       reductions gains copies whose row blocks each take a\n"
    "                       cluster of 4 or 8 CTAs, the loops split among them and\n"
    "                       the reductions met across the cluster (entries\n"
    "                       NAME__vK_cl4, NAME__vK_cl8)\n"
    "  --no-general-strides no general-strides copy: by default each kernel's\n"
    "                       first variant gains a copy that takes tensors whose\n"
    "                       last dim is not contiguous (every access element by\n"
    "                       element at every dim's stride), an entry\n"
    "                       NAME__vK_strided launched only for such tensors\n"
    "  --warp-specialize    experimental: on sm_90a a variant whose @pipeline\n"
    "                       loop's staged tiles all come by tensor copies gains a\n"
    "                       copy whose copies a producer warpgroup issues (the\n"
    "                       threads wait on mbarriers only), an entry NAME__vK_ws\n"
    "                       that the autotuner times beside it\n"
    "  --no-l2-prefetch     no L2 prefetch: by default on sm_90a an entry whose\n"
    "                       loads read slices that move with ctx.block.x (a grid\n"
    "                       of one axis, no dot) asks L2 for the slices of the\n"
    "                       block D later, D a launch parameter the autotuner\n"
    "                       tries at 0 and at the CTAs resident on the device\n"
    "  --early-prefetch     experimental: on sm_90a an entry waits for the kernel\n"
    "                       before it only at its first statement that touches\n"
    "                       global memory, and where that is a loop, first asks\n"
    "                       L2 for the rows of the loop's first iterations (by\n"
    "                       default the wait is the entry's first instruction)\n"
    "  --no-warp-skip       every warp runs every chain that only stores: by\n"
    "                       default a warp whose columns of such a chain (loads,\n"
    "                       elementwise operations, stores) all lie past the\n"
    "                       tensor's end or the tile's skips it (A/B runs)\n"
    "  --no-walk-skip       every warp runs every iteration of a loop that walks\n"
    "                       a row: by default a warp whose columns of an\n"
    "                       iteration all lie past the row's end skips it where\n"
    "                       it would only mask (stores, folds of identities)\n"
    "  --shift-walks        experimental: where rows are not 16-byte aligned, a\n"
    "                       loop that walks a row in blocks of S starts at the\n"
    "                       row's alignment, so that each thread's chunks are\n"
    "                       aligned vectors (correct on the GPU, 5% slower on\n"
    "                       the bench's softmax over 50257 columns: A/B runs)\n"
    "  --row-broadcasts     experimental: a column vector ([R, 1]) that no row\n"
    "                       reduction made, broadcast across an [R, C] tile, is\n"
    "                       planned in the tile's rows (each thread computes the\n"
    "                       row values of its rows) instead of crossing the\n"
    "                       exchange area (correct on the GPU, slower on the\n"
    "                       decode merges it was built for: A/B runs)\n"
    "  --staged-rows        experimental: a variant whose loops read the same rows\n"
    "                       of a read-only tensor in two passes gains a copy that\n"
    "                       copies those rows into shared memory once, for\n"
    "                       launches where they fit (an entry NAME__vK_staged)\n"
    "  --no-l2-hints        no L2 eviction priorities: by default a tensor whose rows\n"
    "                       later loops load again is loaded keeping its lines in\n"
    "                       L2 (evict_last), its last loop's loads letting them go\n"
    "                       (evict_first) (A/B runs)\n"
    "  --l2-hints=stores    experimental: in such a kernel, stores to tensors it\n"
    "                       never reads evict first too\n"
    "  --l2-keep=F          experimental: the share of lines (0.125 to 1, in\n"
    "                       eighths) that evict_last keeps; the rest evict first\n"
    "                       (default 1)\n"
    "  --all-variants       keep every @autotune point: by default a point whose row\n"
    "                       tiles hold more than 64 elements a thread is left out\n"
    "                       when another point holds at most 64 (it spills or runs\n"
    "                       one CTA an SM, and its ptxas run is the build's longest),\n"
    "                       and one whose tensor-core dot results go through shared\n"
    "                       memory when another keeps them in fragments (-v and\n"
    "                       --emit=plan name the points left out)\n"
    "  --emit=STAGE         stop after STAGE and print it: tokens, ast, tir (tile IR),\n"
    "                       plan, plan-yaml (residence, layouts, shared memory, barriers),\n"
    "                       manifest (the YAML the runtime reads beside a cubin),\n"
    "                       ptx, cubin (needs -o FILE), c (needs -o FILE.c: the cubin\n"
    "                       and manifest as data and a function NAME_module_load,\n"
    "                       NAME the file's stem, that loads them through\n"
    "                       phobos_module_load_image: no files at run time),\n"
    "                       header (typed launchers: KERNEL_launch(k, tensors as\n"
    "                       typed device pointers, scalars, dims, stream), and\n"
    "                       KERNEL_launch_views with each tensor's strides)\n"
    "  -v                   print the time of PTX emission and of ptxas, ptxas's\n"
    "                       register and spill report, and the @autotune points\n"
    "                       left out (their plans do not fit, spec 12)\n"
    "  -Wnarrowing          warn at each store or assignment that narrows a float\n"
    "                       implicitly (f32 into an f16 tensor: Phobos's rule)\n"
    "  --diagnostics=STYLE  caret (default: the source line and a caret under the\n"
    "                       range) or plain (the message lines alone)\n"
    "  --max-errors=N       stop after N errors (default 20, 0: no limit)\n"
    "  --help               print this help and exit\n"
    "  --version            print the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 errors in the source, 2 usage error,\n"
    "4 internal compiler error.\n";

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  fputs("phobosc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nTry 'phobosc --help' for more information.\n", stderr);
  exit(EXIT_USAGE);
}

static bool is_identifier(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
  return true;
}

/* A -D value: a decimal or 0x integer that fits in 64 bits, or a finite
 * float. A leading zero is decimal, as in the language. */
static bool is_number(const char *s) {
  char *end;
  if (!*s) return false;
  const char *digits = s[0] == '-' || s[0] == '+' ? s + 1 : s;
  bool hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  if (hex || (*digits >= '0' && *digits <= '9')) {
    errno = 0;
    strtoll(s, &end, hex ? 16 : 10);
    if (*end == 0) return errno == 0;
  }
  errno = 0;
  double v = strtod(s, &end);
  return *end == 0 && errno == 0 && isfinite(v);
}

static void add_define(Options *o, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq) usage_error("-D needs NAME=VALUE, got '%s'", arg);
  if (!is_identifier(arg, (size_t)(eq - arg))) usage_error("-D: '%s' does not start with a valid name", arg);
  if (!is_number(eq + 1))
    usage_error("-D: the value in '%s' is not a 64-bit integer or a finite float", arg);
  if (o->d.ndefines == MAX_DEFINES)
    usage_error("too many -D options (the limit is 64), at '%s'", arg);
  for (int i = 0; i < o->d.ndefines; i++)
    if (strncmp(o->defines[i].name, arg, (size_t)(eq - arg)) == 0 &&
        o->defines[i].name[eq - arg] == 0)
      usage_error("-D: '%s' defines a name given before", arg);
  size_t n = (size_t)(eq - arg);
  char *name = malloc(n + 1);
  if (!name) diag_ice("out of memory");
  memcpy(name, arg, n);
  name[n] = 0;
  o->defines[o->d.ndefines++] = (Define){.name = name, .value = eq + 1};
}

/* Returns the value of "--name=value" when arg is that option. */
static const char *long_value(const char *arg, const char *name) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) == 0 && arg[n] == '=') return arg + n + 1;
  return NULL;
}

static void parse_args(int argc, char **argv, Options *o) {
  o->d.arch = "sm_90a";
  o->d.max_errors = 20;
  bool only_files = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *v;
    if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (o->d.input) usage_error("more than one input file: '%s'", arg);
      o->d.input = arg;
    } else if (strcmp(arg, "--") == 0) {
      only_files = true;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(usage_text, stdout);
      exit(0);
    } else if (strcmp(arg, "-v") == 0) {
      o->d.verbose = true;
    } else if (strcmp(arg, "-Wnarrowing") == 0) {
      o->d.warn_narrowing = true;
    } else if (strcmp(arg, "--version") == 0) {
      printf("phobosc %s\n", PHOBOS_VERSION);
      exit(0);
    } else if (strcmp(arg, "-o") == 0) {
      if (++i == argc) usage_error("%s needs a file name", "-o");
      o->d.output = strcmp(argv[i], "-") == 0 ? NULL : argv[i];
    } else if (strncmp(arg, "-o", 2) == 0) {
      o->d.output = strcmp(arg + 2, "-") == 0 ? NULL : arg + 2;
    } else if (strcmp(arg, "-D") == 0) {
      if (++i == argc) usage_error("%s needs NAME=VALUE", "-D");
      add_define(o, argv[i]);
    } else if (strncmp(arg, "-D", 2) == 0) {
      add_define(o, arg + 2);
    } else if (strcmp(arg, "--no-tma") == 0) {
      o->d.no_tma = true;
    } else if (strcmp(arg, "--producer-warp") == 0) {
      o->d.producer_warp = true;
    } else if (strcmp(arg, "--prefetch") == 0) {
      o->d.prefetch = true;
    } else if (strcmp(arg, "--no-tensor-copies") == 0) {
      o->d.no_tensor_copies = true;
    } else if (strcmp(arg, "--no-wgmma") == 0) {
      o->d.no_wgmma = true;
    } else if (strcmp(arg, "--late-waits") == 0) {
      o->d.late_waits = true;
    } else if (strcmp(arg, "--no-deferred-reductions") == 0) {
      o->d.no_defer = true;
    } else if (strcmp(arg, "--no-one-pass") == 0) {
      o->d.no_onepass = true;
    } else if (strcmp(arg, "--no-aligned-rows") == 0) {
      o->d.no_aligned_rows = true;
    } else if (strcmp(arg, "--no-l2-prefetch") == 0) {
      o->d.no_l2pf = true;
    } else if (strcmp(arg, "--early-prefetch") == 0) {
      o->d.early_pf = true;
    } else if (strcmp(arg, "--no-walk-skip") == 0) {
      o->d.no_walk_skip = true;
    } else if (strcmp(arg, "--no-warp-skip") == 0) {
      o->d.no_skip = true;
    } else if (strcmp(arg, "--shift-walks") == 0) {
      o->d.shift_walk = true;
    } else if (strcmp(arg, "--row-broadcasts") == 0) {
      o->d.row_broadcasts = true;
    } else if (strcmp(arg, "--no-occupancy-copies") == 0) {
      o->d.no_occupancy = true;
    } else if (strcmp(arg, "--no-cluster-rows") == 0) {
      o->d.no_cluster = true;
    } else if (strcmp(arg, "--no-general-strides") == 0) {
      o->d.no_general_strides = true;
    } else if (strcmp(arg, "--warp-specialize") == 0) {
      o->d.specialize = true;
    } else if (strcmp(arg, "--vector-odd-rows") == 0) {
      o->d.vector_odd_rows = true;
    } else if (strcmp(arg, "--no-l2-hints") == 0) {
      o->d.l2_hints = -1;
    } else if (strcmp(arg, "--l2-hints=stores") == 0) {
      o->d.l2_hints = 2;
    } else if ((v = long_value(arg, "--l2-keep"))) {
      char *end;
      double k = strtod(v, &end);
      if (*end || !(k >= 0.125 && k <= 1.0)) usage_error("--l2-keep takes a share of lines from 0.125 to 1, got '%s'", v);
      o->d.l2_keep_eighths = (int)(k * 8 + 0.5);
    } else if (strcmp(arg, "--staged-rows") == 0) {
      o->d.staged_rows = true;
    } else if (strcmp(arg, "--all-variants") == 0) {
      o->d.all_variants = true;
    } else if ((v = long_value(arg, "--arch"))) {
      if (strcmp(v, "sm_90a") != 0 && strcmp(v, "sm_80") != 0)
        usage_error("unsupported --arch '%s' (supported: sm_90a, sm_80)", v);
      o->d.arch = v;
    } else if ((v = long_value(arg, "--emit"))) {
      if (strcmp(v, "tokens") == 0) o->d.emit = EMIT_TOKENS;
      else if (strcmp(v, "ast") == 0) o->d.emit = EMIT_AST;
      else if (strcmp(v, "tir") == 0) o->d.emit = EMIT_TIR;
      else if (strcmp(v, "plan") == 0) o->d.emit = EMIT_PLAN;
      else if (strcmp(v, "plan-yaml") == 0) o->d.emit = EMIT_PLAN_YAML;
      else if (strcmp(v, "manifest") == 0) o->d.emit = EMIT_MANIFEST;
      else if (strcmp(v, "ptx") == 0) o->d.emit = EMIT_PTX;
      else if (strcmp(v, "cubin") == 0) o->d.emit = EMIT_CUBIN;
      else if (strcmp(v, "c") == 0) o->d.emit = EMIT_C;
      else if (strcmp(v, "header") == 0) o->d.emit = EMIT_HEADER;
      else usage_error("unknown --emit stage '%s' (stages: tokens, ast, tir, plan, plan-yaml, manifest, ptx, cubin, c, header)", v);
    } else if ((v = long_value(arg, "--diagnostics"))) {
      if (strcmp(v, "plain") == 0) o->d.plain = true;
      else if (strcmp(v, "caret") == 0) o->d.plain = false;
      else usage_error("unknown --diagnostics style '%s' (styles: plain, caret)", v);
    } else if ((v = long_value(arg, "--max-errors"))) {
      char *end;
      long n = strtol(v, &end, 10);
      if (*v == 0 || *end || n < 0 || n > 100000) usage_error("--max-errors needs a count, got '%s'", v);
      o->d.max_errors = (int)n;
    } else {
      usage_error("unknown option '%s'", arg);
    }
  }
  if (!o->d.input) usage_error("%s", "no input file");
  size_t n = o->d.output ? strlen(o->d.output) : 0;
  if (o->d.emit == EMIT_CHECK && n > 6 && !strcmp(o->d.output + n - 6, ".cubin")) o->d.emit = EMIT_CUBIN;
  if (o->d.emit == EMIT_CUBIN && !o->d.output) usage_error("%s", "a cubin needs an output file: -o FILE.cubin");
  if (o->d.emit == EMIT_C && (!o->d.output || !strcmp(o->d.output, "-")))
    usage_error("%s", "--emit=c needs an output file: -o FILE.c");
}

/* A crash is a compiler bug: say so and exit 4 rather than die by signal. */
#ifndef __SANITIZE_ADDRESS__
static void on_fatal_signal(int sig) {
  static const char msg[] = "phobosc: internal compiler error: fatal signal; "
                            "please report this with the input that caused it\n";
  ssize_t r = write(2, msg, sizeof msg - 1);
  (void)r;
  (void)sig;
  _exit(EXIT_ICE);
}
#endif

int main(int argc, char **argv) {
#ifndef __SANITIZE_ADDRESS__ /* under ASan, let the sanitizer report the crash */
  /* on an alternate stack, so that a stack overflow is reported too (the
   * driver's compile thread sets one up of its own) */
  static char altstack[64 << 10];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  sigaltstack(&ss, NULL);
  struct sigaction sa = {.sa_handler = on_fatal_signal, .sa_flags = SA_ONSTACK};
  sigemptyset(&sa.sa_mask);
  int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &sa, NULL);
#endif
  Options o = {0};
  parse_args(argc, argv, &o);
  o.d.defines = o.defines;
  int status = driver_compile(&o.d, stdout, stderr);
  for (int i = 0; i < o.d.ndefines; i++) free((void *)o.defines[i].name);
  return status;
}
