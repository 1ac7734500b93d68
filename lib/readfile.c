/* Small files of /etc, /proc and /sys, under a root (readfile.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

/* O_CLOEXEC is POSIX.1-2008, hidden by -std=c11 alone on glibc. */
#if defined(__linux__) && !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "readfile.h"

#ifdef _WIN32
/* mingw-w64 (files read only under a fixture root): close-on-exec, no
 * text-mode translation; no terminal or FIFO stands at a path. */
#define O_CLOEXEC (O_NOINHERIT | O_BINARY)
#define O_NOCTTY 0
#define O_NONBLOCK 0
#define AT_FDCWD (-100)
#define openat(dirfd, path, flags) ((void) (dirfd), open(path, flags))
#endif

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

int cpucycles_openat_retrying(int dirfd, const char *path)
{
  int fd = -1, tries;
  for (tries = 0; tries < CPUCYCLES_EINTR_TRIES; tries++) {
    fd = openat(dirfd, path, OPEN_FLAGS);
    if (fd >= 0 || errno != EINTR) break;
  }
  return fd;
}

/* How long ROOT followed by PATH may be, NUL included: Linux's PATH_MAX. */
#define JOINED_PATH_BYTES 4096

/* For a fixture root.  Not inlined: the first call reads the real system,
 * and its stack, which may be a small thread's, never holds the buffer. */
static __attribute__((noinline)) int open_joined(const char *root, size_t rootlen,
                                                 const char *path, size_t pathlen)
{
  char full[JOINED_PATH_BYTES];
  memcpy(full, root, rootlen);
  memcpy(full + rootlen, path, pathlen + 1);
  return cpucycles_openat_retrying(AT_FDCWD, full);
}

int cpucycles_open_under(const char *root, const char *path)
{
  size_t rootlen = root ? strlen(root) : 0, pathlen = strlen(path);
  if (rootlen + pathlen + 1 > JOINED_PATH_BYTES) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (rootlen > 0) return open_joined(root, rootlen, path, pathlen);
  return cpucycles_openat_retrying(AT_FDCWD, path);
}

ssize_t cpucycles_read_retrying(int fd, char *buf, size_t len)
{
  ssize_t r = -1;
  int tries;
  for (tries = 0; tries < CPUCYCLES_EINTR_TRIES; tries++) {
    r = read(fd, buf, len);
    if (r >= 0 || errno != EINTR) break;
  }
  return r;
}

ssize_t cpucycles_read_fd_start(int fd, char *buf, size_t size, int *full)
{
  size_t have = 0;
  ssize_t r = 1;
  while (have < size && (r = cpucycles_read_retrying(fd, buf + have, size - have)) > 0)
    have += (size_t) r;
  *full = have == size;
  return r < 0 ? -1 : (ssize_t) have;
}

ssize_t cpucycles_read_file_start(const char *root, const char *path,
                                  char *buf, size_t size, int *full)
{
  ssize_t result;
  int fd = cpucycles_open_under(root, path);
  if (fd < 0) return -1;
  result = cpucycles_read_fd_start(fd, buf, size, full);
  close(fd);
  return result;
}

int cpucycles_read_lines(const char *root, const char *path, size_t limit,
                         char *buf, size_t size, cpucycles_line_fn *line,
                         void *arg)
{
  size_t have = 0, total = 0;
  int skipping = 0, stop = 0, result = 0;
  int fd = cpucycles_open_under(root, path);

  if (fd < 0) return -1;
  while (total < limit) {
    size_t want = size - have, start = 0;
    const char *newline;
    ssize_t r;

    if (want > limit - total) want = limit - total;
    r = cpucycles_read_retrying(fd, buf + have, want);
    if (r < 0) { result = -2; break; }
    have += (size_t) r;
    total += (size_t) r;
    while (!stop && (newline = memchr(buf + start, '\n', have - start))) {
      size_t len = (size_t) (newline - (buf + start));
      if (skipping) skipping = 0;
      else stop = line(buf + start, len, arg);
      start += len + 1;
    }
    if (!stop && r == 0 && !skipping && start < have)
      stop = line(buf + start, have - start, arg);
    if (stop || r == 0) break;
    if (start == 0 && have == size) {   /* a line longer than buf */
      skipping = 1;
      have = 0;
      continue;
    }
    memmove(buf, buf + start, have - start);
    have -= start;
  }
  close(fd);
  return result;
}
