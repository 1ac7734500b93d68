/* Small files of /etc, /proc and /sys, under a root (readfile.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

/* O_CLOEXEC is POSIX.1-2008, which -std=c11 alone hides on glibc;
 * configure normally defines _GNU_SOURCE in config.h. */
#if defined(__linux__) && !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "readfile.h"

#ifdef _WIN32
/* mingw-w64: Windows' name for close-on-exec, and no text-mode
 * translation.  No terminal or FIFO can stand at a path there.  (The
 * library reads files on Windows only under a fixture root: tests.) */
#define O_CLOEXEC (O_NOINHERIT | O_BINARY)
#define O_NOCTTY 0
#define O_NONBLOCK 0
#endif

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* path (relative to directory dirfd, where there are such directories),
 * again when a signal interrupted the open, CPUCYCLES_EINTR_TRIES times
 * at most. */
static int open_retrying(int dirfd, const char *path)
{
  int fd = -1, tries;

  for (tries = 0; tries < CPUCYCLES_EINTR_TRIES; tries++) {
#ifdef _WIN32
    (void) dirfd;
    fd = open(path, OPEN_FLAGS);
#else
    fd = dirfd == AT_FDCWD ? open(path, OPEN_FLAGS) : openat(dirfd, path, OPEN_FLAGS);
#endif
    if (fd >= 0 || errno != EINTR) break;
  }
  return fd;
}

#ifndef _WIN32
int cpucycles_openat_retrying(int dirfd, const char *path)
{
  return open_retrying(dirfd, path);
}
#endif

/* How long ROOT followed by PATH may be, NUL included: Linux's PATH_MAX. */
#define JOINED_PATH_BYTES 4096

/* ROOT followed by PATH, joined in a buffer of its own, for a fixture
 * root (tests, cpucycles-info's CPUCYCLES_INFO_ROOT).  Not inlined: the
 * library's first call reads the real system, and its stack, which may
 * be a small thread's, never holds the buffer. */
static __attribute__((noinline)) int open_joined(const char *root, size_t rootlen,
                                                 const char *path, size_t pathlen)
{
  char full[JOINED_PATH_BYTES];

  memcpy(full, root, rootlen);
  memcpy(full + rootlen, path, pathlen + 1);
#ifdef _WIN32
  return open_retrying(-1, full);
#else
  return open_retrying(AT_FDCWD, full);
#endif
}

int cpucycles_open_under(const char *root, const char *path)
{
  size_t rootlen, pathlen;

  if (!root) root = "";
  rootlen = strlen(root);
  pathlen = strlen(path);
  if (rootlen + pathlen + 1 > JOINED_PATH_BYTES) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (rootlen > 0) return open_joined(root, rootlen, path, pathlen);
#ifdef _WIN32
  return open_retrying(-1, path);
#else
  return open_retrying(AT_FDCWD, path);
#endif
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

  *full = 0;
  for (;;) {
    ssize_t r;
    if (have == size) { *full = 1; return (ssize_t) have; }
    r = cpucycles_read_retrying(fd, buf + have, size - have);
    if (r < 0) return -1;
    if (r == 0) return (ssize_t) have;
    have += (size_t) r;
  }
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
