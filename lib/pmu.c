/* The core PMUs, from sysfs (pmu.h). */
#include <config.h> /* (_GNU_SOURCE) */

#include "pmu.h"

#include <string.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

#if defined(__linux__) && defined(SYS_getdents64)

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "readfile.h"

#define DEVICES "/sys/bus/event_source/devices/"

/* A read into buf (len, or -1; full: it filled buf) as a string without
 * trailing white space: its length, or -1 (failed; too long but cut_ok). */
static int text_read(char *buf, ssize_t len, int full, int cut_ok)
{
  if (len < 0 || (full && !cut_ok)) return -1;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' ||
                     buf[len - 1] == '\t'))
    len--;
  buf[len] = 0;
  return (int) len;
}

/* ROOT/DEVICES/pmu/rest, as text_read() gives it (not cut). */
static int read_pmu_file(const char *root, const char *pmu, const char *rest,
                         char *buf, size_t size)
{
  char path[256];
  size_t a = sizeof DEVICES - 1, b = strlen(pmu), c = strlen(rest);
  ssize_t len;
  int full;
  if (a + b + 1 + c + 1 > sizeof path) return -1;
  memcpy(path, DEVICES, a);
  memcpy(path + a, pmu, b);
  path[a + b] = '/';
  memcpy(path + a + b + 1, rest, c + 1);
  len = cpucycles_read_file_start(root, path, buf, size - 1, &full);
  return text_read(buf, len, full, 0);
}

static int digit_value(char ch, unsigned int base)
{
  unsigned int d;
  if (ch >= '0' && ch <= '9') d = (unsigned int) (ch - '0');
  else if (ch >= 'a' && ch <= 'f') d = (unsigned int) (ch - 'a' + 10);
  else if (ch >= 'A' && ch <= 'F') d = (unsigned int) (ch - 'A' + 10);
  else return -1;
  return d < base ? (int) d : -1;
}

/* Decimal, or hexadecimal after 0x, from s to end: 0 and *value, or -1. */
static int parse_number(const char *s, const char *end, unsigned long long *value)
{
  unsigned int base = 10;
  unsigned long long v = 0;

  if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s += 2;
  }
  if (s == end) return -1;
  for (; s < end; s++) {
    int d = digit_value(*s, base);
    if (d < 0) return -1;
    if (v > (~0ULL - (unsigned long long) d) / base) return -1;
    v = v * base + (unsigned long long) d;
  }
  *value = v;
  return 0;
}

/* A name that stays one path component. */
static int plain_name(const char *s, size_t len)
{
  size_t i;
  if (len == 0 || s[0] == '.') return 0;
  for (i = 0; i < len; i++)
    if (s[i] == '/' || s[i] == 0) return 0;
  return 1;
}

/* value into *config through the bit ranges of the PMU's format file for
 * field `name` ("config:0-7,32-35": the low bits into the first range). */
static int place_field(const char *root, const char *pmu, const char *name,
                       size_t namelen, unsigned long long value,
                       unsigned long long *config)
{
  char rest[80], format[128];
  const char *p, *end;
  int len;

  if (!plain_name(name, namelen) || namelen + sizeof "format/" > sizeof rest)
    return -1;
  memcpy(rest, "format/", 7);
  memcpy(rest + 7, name, namelen);
  rest[7 + namelen] = 0;
  len = read_pmu_file(root, pmu, rest, format, sizeof format);
  if (len < 0) return -1;
  /* only attr.config: a cycles event needs nothing else */
  if (strncmp(format, "config:", 7) != 0) return -1;
  p = format + 7;
  end = format + len;
  while (p < end) {
    const char *comma = memchr(p, ',', (size_t) (end - p));
    const char *dash, *stop = comma ? comma : end;
    unsigned long long lo, hi, bits, mask;
    dash = memchr(p, '-', (size_t) (stop - p));
    if (parse_number(p, dash ? dash : stop, &lo) != 0) return -1;
    if (!dash) hi = lo;
    else if (parse_number(dash + 1, stop, &hi) != 0) return -1;
    if (hi > 63 || lo > hi) return -1;
    bits = hi - lo + 1;
    mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    *config |= (value & mask) << lo;
    value = bits == 64 ? 0 : value >> bits;
    p = comma ? comma + 1 : end;
  }
  return value == 0 ? 0 : -1; /* bits left over: the value does not fit */
}

int cpucycles_pmu_event_config(const char *root, const char *pmu,
                               const char *event, unsigned long long *config)
{
  const char *p = event, *end = event + strlen(event);
  unsigned long long result = 0;

  if (!plain_name(pmu, strlen(pmu))) return -1;
  if (p == end) return -1;
  while (p < end) {
    const char *comma = memchr(p, ',', (size_t) (end - p));
    const char *stop = comma ? comma : end;
    const char *eq = memchr(p, '=', (size_t) (stop - p));
    unsigned long long value = 1; /* a bare term sets its field to 1 */
    size_t namelen = (size_t) ((eq ? eq : stop) - p);
    if (eq && parse_number(eq + 1, stop, &value) != 0) return -1;
    /* A zero field changes nothing, whatever its format says. */
    if (value != 0 &&
        place_field(root, pmu, p, namelen, value, &result) != 0)
      return -1;
    p = comma ? comma + 1 : end;
  }
  *config = result;
  return 0;
}

/* The names perf gives a core PMU's cycles event: x86, Arm, Apple. */
static const char *const cycles_events[] = {
  "events/cpu-cycles", "events/cpu_cycles", "events/cycles"
};

/* name/file under dirfd, as read_pmu_file() (cut with cut_ok: a long cpus
 * list); relative, so that the kernel does not walk the whole path for
 * each of the many PMUs that are not core PMUs. */
static int read_at(int dirfd, const char *name, const char *file,
                   char *buf, size_t size, int cut_ok)
{
  char path[128];
  size_t a = strlen(name), b = strlen(file);
  ssize_t len;
  int fd, full;

  if (a + 1 + b + 1 > sizeof path) return -1;
  memcpy(path, name, a);
  path[a] = '/';
  memcpy(path + a + 1, file, b + 1);
  fd = cpucycles_openat_retrying(dirfd, path);
  if (fd < 0) return -1;
  len = cpucycles_read_fd_start(fd, buf, size - 1, &full);
  close(fd);
  return text_read(buf, len, full, cut_ok);
}

/* Whether DEVICES/name is a core PMU; if so, its description. */
static int describe(const char *root, int dirfd, const char *name,
                    struct cpucycles_pmu *pmu)
{
  char buf[256];
  unsigned long long type;
  size_t i;
  int len;

  if (strlen(name) >= sizeof pmu->name || !plain_name(name, strlen(name)))
    return 0;
  if (read_at(dirfd, name, "cpus", buf, sizeof buf, 1) <= 0) return 0;
  len = read_at(dirfd, name, "type", buf, sizeof buf, 0);
  if (len <= 0 || parse_number(buf, buf + len, &type) != 0 ||
      type > 0xffffffffULL)
    return 0;
  memset(pmu, 0, sizeof *pmu);
  memcpy(pmu->name, name, strlen(name) + 1);
  pmu->type = (unsigned int) type;
  for (i = 0; i < sizeof cycles_events / sizeof cycles_events[0]; i++) {
    if (read_pmu_file(root, name, cycles_events[i], buf, sizeof buf) > 0 &&
        cpucycles_pmu_event_config(root, name, buf, &pmu->raw) == 0) {
      pmu->has_raw = 1;
      break;
    }
  }
  return 1;
}

/* Into pmus[0..*kept), ordered by type; *kept grows up to max. */
static void keep(struct cpucycles_pmu *pmus, int max, int *kept,
                 const struct cpucycles_pmu *pmu)
{
  int i = *kept;
  if (i == max) {
    if (max == 0 || pmus[max - 1].type < pmu->type) return;
    i = max - 1; /* the largest type makes room */
  } else {
    (*kept)++;
  }
  for (; i > 0 && pmus[i - 1].type > pmu->type; i--) pmus[i] = pmus[i - 1];
  pmus[i] = *pmu;
}

/* struct linux_dirent64, as the system call fills it in. */
struct dirent64_record {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

/* One getdents64 call's room: the longest record (a 255-byte name) and a
 * few more, on the first call's stack, which may be a small thread's. */
#define DIRENT_BYTES 512

int cpucycles_pmu_discover(const char *root, struct cpucycles_pmu *pmus, int max)
{
  union { char bytes[DIRENT_BYTES]; unsigned long long align; } buf;
  struct cpucycles_pmu pmu;
  int fd, found = 0, kept = 0;

  fd = cpucycles_open_under(root, DEVICES);
  if (fd < 0) return 0;
  for (;;) {
    long n = -1, at;
    int tries;
    /* EINTR: again, but not forever (readfile.h) */
    for (tries = 0; tries < CPUCYCLES_EINTR_TRIES; tries++) {
      n = syscall(SYS_getdents64, fd, buf.bytes, sizeof buf.bytes);
      if (n >= 0 || errno != EINTR) break;
    }
    if (n <= 0) break;
    for (at = 0; at < n;) {
      const struct dirent64_record *d =
        (const struct dirent64_record *) (void *) (buf.bytes + at);
      if (d->d_reclen == 0) break;
      at += d->d_reclen;
      if (describe(root, fd, d->d_name, &pmu)) {
        found++;
        keep(pmus, max, &kept, &pmu);
      }
    }
  }
  close(fd);
  return found;
}

#else

int cpucycles_pmu_discover(const char *root, struct cpucycles_pmu *pmus, int max)
{
  (void) root; (void) pmus; (void) max;
  return 0;
}

int cpucycles_pmu_event_config(const char *root, const char *pmu,
                               const char *event, unsigned long long *config)
{
  (void) root; (void) pmu; (void) event; (void) config;
  return -1;
}

#endif
