/* diag.c: diagnostics in the GNU form.
 *
 *   file:line:col: error: message
 *     12 |   let x = y + 1
 *        |           ^~~~~
 *
 * Lines and columns count from 1. A plain mode leaves out the source line
 * and caret so golden files do not change with cosmetic edits. After
 * max_errors errors the rest are dropped and one line says so. */
#include "lang.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void diag_init(Diags *d, const Source *src, FILE *out, bool plain) {
  memset(d, 0, sizeof *d);
  d->src = src;
  d->out = out;
  d->plain = plain;
  d->max_errors = 20;
}

/* Returns the start of line `line` (1-based) of the source, or NULL. The
 * search starts from the line found last when it is not past this one:
 * diagnostics mostly come in source order, so a file of many warnings is
 * not scanned from its start for each. */
static const char *line_start(Diags *d, int line, size_t *len) {
  const Source *src = d->src;
  if (!src || !src->text || line < 1) return NULL;
  const char *p = src->text, *end = src->text + src->len;
  int l = 1;
  if (d->seen_src == src && d->seen_line >= 1 && d->seen_line <= line) {
    p = d->seen_at;
    l = d->seen_line;
  }
  for (; l < line; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return NULL;
    p = nl + 1;
  }
  d->seen_src = src;
  d->seen_line = line;
  d->seen_at = p;
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *len = (size_t)((nl ? nl : end) - p);
  return p;
}

/* The source line and a caret under the range. A line longer than
 * CARET_WIDTH shows CARET_WIDTH bytes around the caret's start, with
 * "..." where it is cut. */
static void show_source(Diags *d, Span at) {
  size_t len;
  const char *text = line_start(d, at.first_line, &len);
  if (!text) return;
  size_t first = at.first_column < 1 ? 0 : (size_t)at.first_column - 1; /* 0-based */
  size_t last = at.last_line != at.first_line ? (len ? len - 1 : 0) : at.last_column >= 1 ? (size_t)at.last_column - 1 : 0;
  if (first > len) first = len;
  if (last < first) last = first;
  size_t from = 0, to = len;
  if (len > CARET_WIDTH) {
    from = first > CARET_WIDTH / 4 ? first - CARET_WIDTH / 4 : 0;
    to = from + CARET_WIDTH < len ? from + CARET_WIDTH : len;
    if (to - from < CARET_WIDTH) from = to - CARET_WIDTH;
  }
  const char *lead = from ? "..." : "";
  fprintf(d->out, "%5d | %s", at.first_line, lead);
  for (size_t i = from; i < to; i++) {
    unsigned char c = (unsigned char)text[i];
    fputc(c == '\t' ? ' ' : (c < 32 || c == 127) ? '?' : c, d->out);
  }
  if (to < len) fputs("...", d->out);
  fprintf(d->out, "\n      | %*s", (int)strlen(lead), "");
  for (size_t c = from; c < first; c++) fputc(' ', d->out);
  fputc('^', d->out);
  for (size_t c = first + 1; c <= last && c < to; c++) fputc('~', d->out);
  fputc('\n', d->out);
}

static const char *kind_name[] = {"error", "warning", "note"};

void diag_vreport(Diags *d, DiagKind kind, Span at, const char *fmt, va_list ap) {
  if (kind == DIAG_NOTE) {
    if (d->last_dropped) return;
  } else {
    d->last_dropped = d->stopped;
    if (d->stopped) return;
    if (kind == DIAG_ERROR) d->errors++;
    else d->warnings++;
  }
  if (d->silent) return;
  const char *file = at.file ? at.file : d->src ? d->src->name : "<input>";
  if (at.first_line > 0)
    fprintf(d->out, "%s:%d:%d: %s: ", file, at.first_line, at.first_column, kind_name[kind]);
  else
    fprintf(d->out, "%s: %s: ", file, kind_name[kind]);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  /* a note about the very spot just shown does not show it again */
  bool same = kind == DIAG_NOTE && memcmp(&at, &d->last_shown, sizeof at) == 0;
  if (!d->plain && at.first_line > 0 && !same) show_source(d, at);
  d->last_shown = at;
  if (kind == DIAG_ERROR && d->max_errors && d->errors >= d->max_errors) {
    d->stopped = true;
    fprintf(d->out, "%s: note: stopping after %d errors\n", file, d->errors);
  }
}

#define REPORT(kind)          \
  va_list ap;                 \
  va_start(ap, fmt);          \
  diag_vreport(d, kind, at, fmt, ap); \
  va_end(ap)

void diag_error(Diags *d, Span at, const char *fmt, ...) { REPORT(DIAG_ERROR); }
void diag_warning(Diags *d, Span at, const char *fmt, ...) { REPORT(DIAG_WARNING); }
void diag_note(Diags *d, Span at, const char *fmt, ...) { REPORT(DIAG_NOTE); }

void diag_note_plain(Diags *d, const char *fmt, ...) {
  Span at = {0};
  REPORT(DIAG_NOTE);
}

_Noreturn void diag_ice(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("phobosc: internal compiler error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nphobosc: please report this with the input that caused it\n", stderr);
  va_end(ap);
  exit(4);
}

/* What kind of file st is, for "not a regular file". */
static const char *file_kind(const struct stat *st) {
  if (S_ISDIR(st->st_mode)) return "a directory";
  if (S_ISFIFO(st->st_mode)) return "a FIFO";
  if (S_ISCHR(st->st_mode)) return "a character device";
  if (S_ISBLK(st->st_mode)) return "a block device";
  if (S_ISSOCK(st->st_mode)) return "a socket";
  return "not a regular file";
}

/* Reads at most MAX_SOURCE_BYTES (spec 13.3). A path must name a regular
 * file: it is opened without blocking (a FIFO with no writer would wait
 * forever) and refused after fstat when it is anything else (a FIFO,
 * /dev/zero, a directory) or too large. '-' is standard input, which may be
 * a pipe: it is read up to one byte past the limit, never further. */
bool source_load(Arena *a, const char *path, Source *out, const char **why) {
  bool is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? 0 : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = strerror(errno);
    return false;
  }
  struct stat st;
  if (!is_stdin) {
    if (fstat(fd, &st) != 0) {
      *why = strerror(errno);
      close(fd);
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      *why = arena_printf(a, "it is %s, not a regular file (use '-' to read standard input)", file_kind(&st));
      close(fd);
      return false;
    }
    if (st.st_size > MAX_SOURCE_BYTES) {
      *why = arena_printf(a, "it is %lld bytes; phobosc reads at most %d (1 MiB)", (long long)st.st_size,
                          MAX_SOURCE_BYTES);
      close(fd);
      return false;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  size_t cap = (size_t)MAX_SOURCE_BYTES + 1, len = 0;
  char *buf = malloc(cap + 1);
  if (!buf) diag_ice("out of memory reading '%s'", path);
  bool bad = false;
  while (len < cap) {
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      bad = true;
      *why = strerror(errno);
      break;
    }
    if (n == 0) break;
    len += (size_t)n;
  }
  if (!is_stdin) close(fd);
  if (!bad && len > MAX_SOURCE_BYTES) {
    bad = true;
    *why = arena_printf(a, "%s more than %d bytes; phobosc reads at most %d (1 MiB)",
                        is_stdin ? "standard input holds" : "it grew to", MAX_SOURCE_BYTES, MAX_SOURCE_BYTES);
  }
  if (bad) {
    free(buf);
    return false;
  }
  out->name = arena_strdup(a, is_stdin ? "<stdin>" : path);
  out->text = arena_strndup(a, buf, len);
  out->len = len;
  free(buf);
  return true;
}
