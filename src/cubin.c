/* cubin.c: PTX to cubin with ptxas, run as a child process.
 *
 * ptxas is found through $PHOBOS_PTXAS, then PATH, then /usr/local/cuda/bin.
 * When it fails, the .ptx is kept beside the output and the exact command
 * that reproduces the failure is printed, with ptxas's own messages.
 *
 * A file of many @autotune variants is one module of many entries, which
 * ptxas assembles one after another: `--split-compile N` spreads them over
 * N threads (the online CPUs, at most 16; $PHOBOS_PTXAS_THREADS sets N, 1
 * for none). The code is the same either way (the cubin's .text sections
 * are byte-identical; its notes record the option). A ptxas too old for the
 * option, which names it in its error, is run again without it. */
#include "cubin.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool executable(const char *p) { return access(p, X_OK) == 0; }

const char *cubin_find_ptxas(char *buf, size_t len) {
  const char *env = getenv("PHOBOS_PTXAS");
  if (env && *env) return env;
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *colon = strchr(path, ':');
    size_t n = colon ? (size_t)(colon - path) : strlen(path);
    snprintf(buf, len, "%.*s/ptxas", (int)n, path);
    if (n && executable(buf)) return buf;
    path = colon ? colon + 1 : NULL;
  }
  snprintf(buf, len, "/usr/local/cuda/bin/ptxas");
  return executable(buf) ? buf : NULL;
}

/* Whether the file ptxas wrote is a cubin: there, and an ELF64
 * little-endian header whose machine is EM_CUDA (190). NULL when it is,
 * else what is wrong. */
static const char *not_a_cubin(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(buf, len, "it cannot be opened: %s", strerror(errno)), buf;
  unsigned char h[64];
  size_t n = fread(h, 1, sizeof h, f);
  fclose(f);
  if (n == 0) return "it is empty";
  if (n < sizeof h) return snprintf(buf, len, "it is %zu bytes, shorter than an ELF header", n), buf;
  if (memcmp(h, "\177ELF", 4) != 0) return "it is not an ELF file";
  if (h[4] != 2) return "it is not a 64-bit ELF file";
  if (h[5] != 1) return "it is not a little-endian ELF file";
  unsigned machine = h[18] | (unsigned)h[19] << 8;
  if (machine != 190) return snprintf(buf, len, "its ELF machine is %u, not EM_CUDA (190)", machine), buf;
  return NULL;
}

/* How many threads ptxas may assemble entries on: 0 for the option left out. */
static int ptxas_threads(void) {
  const char *env = getenv("PHOBOS_PTXAS_THREADS");
  long n;
  if (env && *env) {
    char *end;
    n = strtol(env, &end, 10);
    if (*end || n < 0) n = 1;
  } else {
    n = sysconf(_SC_NPROCESSORS_ONLN);
  }
  if (n > 16) n = 16;
  return n >= 2 ? (int)n : 0;
}

/* Runs argv[0] with argv; its exit status in *status (or the spawn error in
 * the result) and its output, malloc'ed, in *msg. */
static int run_ptxas(char *const *argv, int *status, char **msg, size_t *mlen) {
  *msg = NULL, *mlen = 0, *status = 0;
  int pipefd[2];
  if (pipe(pipefd) != 0) return errno;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  FILE *m = open_memstream(msg, mlen);
  char chunk[4096];
  ssize_t got;
  while (rc == 0 && (got = read(pipefd[0], chunk, sizeof chunk)) > 0) fwrite(chunk, 1, (size_t)got, m);
  close(pipefd[0]);
  fclose(m);
  if (rc == 0) waitpid(pid, status, 0);
  return rc;
}

/* ptxas's messages without the -v report's info lines of the entries before the failure */
static void print_messages(FILE *err, const char *msg, int exit_code) {
  fprintf(err, "phobosc: error: ptxas failed (exit %d):\n", exit_code);
  for (const char *l = msg; l && *l;) {
    const char *nl = strchr(l, '\n');
    int n = nl ? (int)(nl - l + 1) : (int)strlen(l);
    bool info = !strncmp(l, "ptxas info", 10) || (n > 4 && !strncmp(l, "    ", 4) && strstr(l, "bytes stack frame"));
    if (!info) fprintf(err, "%.*s", n, l);
    l += n;
  }
}

static void print_reproduce(FILE *err, const char *ptx_path, const char *ptxas, const char *archarg,
                            const char *cubin_path, int nt, const char *nthreads) {
  fprintf(err, "phobosc: note: the PTX is kept in %s; reproduce with:\n  %s %s -O3 -o %s %s%s%s\n", ptx_path, ptxas,
          archarg, cubin_path, ptx_path, nt ? " --split-compile " : "", nt ? nthreads : "");
}

void cubin_print_refusal(FILE *err, const char *ptx_path, const char *cubin_path, const char *arch,
                         const CubinRefusal *r) {
  char pbuf[4096], archarg[64], nthreads[16];
  const char *ptxas = cubin_find_ptxas(pbuf, sizeof pbuf);
  int nt = r->threads;
  snprintf(archarg, sizeof archarg, "-arch=%s", arch);
  snprintf(nthreads, sizeof nthreads, "%d", nt);
  print_messages(err, r->msg, r->exit_code);
  print_reproduce(err, ptx_path, ptxas ? ptxas : "ptxas", archarg, cubin_path, nt, nthreads);
}

bool cubin_assemble(const char *ptx_path, const char *cubin_path, const char *arch, bool verbose, FILE *err,
                    char **report, CubinRefusal *refusal) {
  if (report) *report = NULL;
  if (refusal) refusal->msg = NULL, refusal->exit_code = 0;
  char pbuf[4096];
  const char *ptxas = cubin_find_ptxas(pbuf, sizeof pbuf);
  if (!ptxas) {
    fprintf(err, "phobosc: error: ptxas not found (set PHOBOS_PTXAS, or put the CUDA toolkit's bin on PATH)\n");
    return false;
  }
  char archarg[64], nthreads[16];
  snprintf(archarg, sizeof archarg, "-arch=%s", arch);
  int nt = ptxas_threads();
  snprintf(nthreads, sizeof nthreads, "%d", nt);
  char *argv[] = {(char *)ptxas, archarg, "-O3", "-v", "-o", (char *)cubin_path, (char *)ptx_path, NULL, NULL, NULL};
  if (nt) argv[7] = "--split-compile", argv[8] = nthreads;
  char *msg;
  size_t mlen;
  int status, rc = run_ptxas(argv, &status, &msg, &mlen);
  bool ok = rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok && rc == 0 && nt && msg && strstr(msg, "split-compile")) { /* an older ptxas */
    free(msg);
    argv[7] = NULL, nt = 0;
    rc = run_ptxas(argv, &status, &msg, &mlen);
    ok = rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (ok && verbose && mlen) fputs(msg, err);
  /* ptxas said it succeeded: what it wrote must be a cubin before the
   * manifest says there is one; a file that is not is removed */
  char why[128];
  const char *bad = ok ? not_a_cubin(cubin_path, why, sizeof why) : NULL;
  if (bad) {
    fprintf(err, "phobosc: error: ptxas exited 0 but %s is no cubin: %s\n", cubin_path, bad);
    unlink(cubin_path);
    ok = false;
  }
  if (!ok && !bad && refusal && rc == 0 && WIFEXITED(status) && msg) { /* the caller's to read */
    refusal->msg = msg, refusal->exit_code = WEXITSTATUS(status), refusal->threads = nt;
    return false;
  }
  if (!ok && !bad) {
    if (rc != 0) fprintf(err, "phobosc: error: cannot run %s: %s\n", ptxas, strerror(rc));
    else if (WIFSIGNALED(status)) fprintf(err, "phobosc: error: ptxas died by signal %d\n", WTERMSIG(status));
    else print_messages(err, msg, WEXITSTATUS(status));
  }
  if (!ok) print_reproduce(err, ptx_path, ptxas, archarg, cubin_path, nt, nthreads);
  if (ok && report) *report = msg, msg = NULL;
  free(msg);
  return ok;
}

/* ptxas -v reports each entry as
 *   ptxas info    : Function properties for NAME
 *       N bytes stack frame, S bytes spill stores, L bytes spill loads */
void cubin_spills(const char *report, void (*fn)(const char *entry, int len, long stores, long loads, void *ctx),
                  void *ctx) {
  static const char key[] = "Function properties for ";
  for (const char *p = report ? strstr(report, key) : NULL; p; p = strstr(p, key)) {
    const char *name = p + sizeof key - 1, *eol = strchr(name, '\n');
    if (!eol) break;
    int len = (int)(eol - name);
    while (len > 0 && (name[len - 1] == '\r' || name[len - 1] == ' ')) len--;
    const char *next = eol + 1, *nl = strchr(next, '\n');
    long frame, stores, loads;
    if (sscanf(next, " %ld bytes stack frame, %ld bytes spill stores, %ld bytes spill loads", &frame, &stores, &loads) ==
            3 &&
        (stores > 0 || loads > 0))
      fn(name, len, stores, loads, ctx);
    p = nl ? nl : eol;
  }
}
