/* test_runtime_threads.c: libphobos from several threads and processes at
 * once, over the fake driver (FAKE_LIBCUDA): two contexts in two threads
 * load, launch and autotune; two processes and then two threads sharing one
 * PHOBOS_CACHE_DIR each write distinct entries many times, and the file
 * must keep every one (issue 17, finding 16). .ci/test runs it under
 * ThreadSanitizer too (build-tsan). Prints TAP; exits non-zero on a failure. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "phobos.h"

enum { PROCESS_SHAPES = 60, THREAD_SHAPES = 40, REPEATS = 3 };

static const char *manifest =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: scale.ph\n"
    "source_hash: fedcba9876543210\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: scale\n"
    "  params:\n"
    "  - {name: X, kind: tensor, dtype: f32, dims: [N], written: false}\n"
    "  - {name: Y, kind: tensor, dtype: f32, dims: [N], written: true}\n"
    "  variants:\n"
    "  - {entry: scale__v0, grid: [\"N 128 cdiv\"], threads: 128, shared_bytes: 0}\n"
    "  - {entry: scale__v1, grid: [\"N 256 cdiv\"], threads: 256, shared_bytes: 0}\n";

static char cubin[256];
static int failures, tests;

static void tap(int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s %d - ", ok ? "ok" : "not ok", ++tests);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  failures += !ok;
}

static void write_module(void) {
  char dir[] = "/tmp/phobos_threads_XXXXXX", path[300];
  if (!mkdtemp(dir)) perror("mkdtemp"), exit(1);
  snprintf(path, sizeof path, "%s/k.yaml", dir);
  FILE *f = fopen(path, "w");
  if (!f) perror(path), exit(1);
  fputs(manifest, f);
  fclose(f);
  unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  elf[18] = 190; /* EM_CUDA */
  elf[20] = 1;
  elf[52] = 64;
  snprintf(cubin, sizeof cubin, "%s/k.cubin", dir);
  f = fopen(cubin, "wb");
  if (!f) perror(cubin), exit(1);
  fwrite(elf, 1, sizeof elf, f);
  fclose(f);
}

static void fresh_cache_dir(void) {
  static char dir[64];
  strcpy(dir, "/tmp/phobos_threads_cache_XXXXXX");
  if (!mkdtemp(dir)) perror("mkdtemp"), exit(1);
  setenv("PHOBOS_CACHE_DIR", dir, 1);
}

/* One worker: its own context; launches shapes N = first, first + step,
 * ... (each a new entry, tuned), each REPEATS times (cached after the
 * first). An error message, or NULL. */
typedef struct Work {
  int first, step, count;
  char err[1200];
} Work;

static void *work(void *arg) {
  Work *w = arg;
  phobos_context *ctx = NULL;
  phobos_module *mod;
  phobos_kernel *k;
  phobos_status s = phobos_context_create(0, &ctx);
  if (s == PHOBOS_OK) s = phobos_module_load(ctx, cubin, &mod);
  if (s == PHOBOS_OK) s = phobos_kernel_get(mod, "scale", &k);
  for (int i = 0; i < w->count && s == PHOBOS_OK; i++) {
    int64_t n = w->first + (int64_t)i * w->step;
    float *x = calloc((size_t)n, sizeof *x), *y = calloc((size_t)n, sizeof *y);
    phobos_arg a[2] = {phobos_tensor_arg((uint64_t)(uintptr_t)x, PHOBOS_F32, 1, &n),
                       phobos_tensor_arg((uint64_t)(uintptr_t)y, PHOBOS_F32, 1, &n)};
    for (int r = 0; r < REPEATS && s == PHOBOS_OK; r++) s = phobos_launch(k, a, 2, NULL);
    if (s == PHOBOS_OK && strcmp(phobos_kernel_last_variant(k), "scale__v1"))
      snprintf(w->err, sizeof w->err, "N = %lld chose %s", (long long)n, phobos_kernel_last_variant(k));
    free(x), free(y);
  }
  if (s != PHOBOS_OK) snprintf(w->err, sizeof w->err, "%s: %s", phobos_status_name(s), phobos_last_error(ctx));
  else if (phobos_cache_status(ctx) != PHOBOS_OK) snprintf(w->err, sizeof w->err, "cache: %s", phobos_last_error(ctx));
  phobos_context_destroy(ctx);
  return NULL;
}

/* how many of the workers' shapes the cache file lacks */
static int missing(const Work *w, int nw, char *first_missing, size_t len) {
  char path[300];
  snprintf(path, sizeof path, "%s/autotune.yaml", getenv("PHOBOS_CACHE_DIR"));
  FILE *f = fopen(path, "r");
  if (!f) return snprintf(first_missing, len, "no %s", path), -1;
  static char text[1 << 20];
  size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = 0;
  int lost = 0;
  for (int j = 0; j < nw; j++)
    for (int i = 0; i < w[j].count; i++) {
      char key[64];
      snprintf(key, sizeof key, "|N=%d\": scale__v1", w[j].first + i * w[j].step);
      if (!strstr(text, key) && !lost++) snprintf(first_missing, len, "%s", key);
    }
  return lost;
}

int main(void) {
  if (!getenv("FAKE_LIBCUDA")) {
    printf("1..0 # SKIP FAKE_LIBCUDA is not set\n");
    return 0;
  }
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  unsetenv("PHOBOS_AUTOTUNE");
  write_module();
  printf("1..3\n");
  fflush(stdout);

  /* two processes (forked before this process starts any thread), odd and
   * even shapes, one cache */
  fresh_cache_dir();
  Work pw[2] = {{.first = 1000, .step = 2, .count = PROCESS_SHAPES}, {.first = 1001, .step = 2, .count = PROCESS_SHAPES}};
  pid_t pid[2];
  for (int j = 0; j < 2; j++) {
    fflush(stdout);
    if ((pid[j] = fork()) < 0) perror("fork"), exit(1);
    if (pid[j] == 0) {
      work(&pw[j]);
      if (pw[j].err[0]) fprintf(stderr, "process %d: %s\n", j, pw[j].err);
      _exit(pw[j].err[0] ? 1 : 0);
    }
  }
  int ok = 1;
  for (int j = 0; j < 2; j++) {
    int st = 0;
    waitpid(pid[j], &st, 0);
    ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  char first[512] = "";
  int lost = missing(pw, 2, first, sizeof first);
  tap(ok && lost == 0, "two processes on one cache, %d new entries each: %d lost%s%s", PROCESS_SHAPES, lost,
      lost ? ", first " : "", first);

  /* two threads, each its own context, on a fresh cache */
  fresh_cache_dir();
  Work tw[2] = {{.first = 5000, .step = 2, .count = THREAD_SHAPES}, {.first = 5001, .step = 2, .count = THREAD_SHAPES}};
  pthread_t th[2];
  for (int j = 0; j < 2; j++) pthread_create(&th[j], NULL, work, &tw[j]);
  for (int j = 0; j < 2; j++) pthread_join(th[j], NULL);
  tap(!tw[0].err[0] && !tw[1].err[0], "two contexts in two threads load, launch and autotune%s%s%s%s",
      tw[0].err[0] ? ": " : "", tw[0].err, tw[1].err[0] ? ": " : "", tw[1].err);
  lost = missing(tw, 2, first, sizeof first);
  tap(lost == 0, "two threads on one cache, %d new entries each: %d lost%s%s", THREAD_SHAPES, lost,
      lost ? ", first " : "", first);
  return failures ? 1 : 0;
}
