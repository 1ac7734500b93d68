/* Small files of /etc, /proc and /sys, under a root (readfile.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "readfile.h"

int cpucycles_open_under(const char *root, const char *path)
{
  char full[4096];
  size_t rootlen, pathlen;
  int fd;

  if (!root) root = "";
  rootlen = strlen(root);
  pathlen = strlen(path);
  if (rootlen + pathlen + 1 > sizeof full) return -1;
  memcpy(full, root, rootlen);
  memcpy(full + rootlen, path, pathlen + 1);
  do fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  return fd;
}

ssize_t cpucycles_read_file_under(const char *root, const char *path,
                                  char *buf, size_t size)
{
  size_t have = 0;
  ssize_t result = -1;
  int fd;

  if (size == 0) return -1;
  fd = cpucycles_open_under(root, path);
  if (fd < 0) return -1;
  while (have < size - 1) {  /* a file that fills buf is too long */
    ssize_t r = read(fd, buf + have, size - 1 - have);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    if (r == 0) {
      buf[have] = 0;
      result = (ssize_t) have;
      break;
    }
    have += (size_t) r;
  }
  close(fd);
  return result;
}
