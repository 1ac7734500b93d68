/* readfile.h: reading a small file of /etc, /proc or /sys, under a root
 * directory that tests replace with a fixture tree.  No heap, no stdio:
 * open(O_CLOEXEC | O_NONBLOCK) and read() into the caller's buffer.
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_READFILE_H
#define CPUCYCLES_READFILE_H

#include <stddef.h>
#include <sys/types.h>

/* ROOT followed by PATH ("" or NULL: the real system), opened read-only,
 * close-on-exec, non-blocking (a FIFO planted there must not hang the
 * first call).  Returns the descriptor, or -1. */
int cpucycles_open_under(const char *root, const char *path);

/* The whole of ROOT/PATH into buf, until end of file (short reads are
 * normal for proc and sysfs).  Returns the length, or -1 on error or when
 * the file does not fit in size - 1 bytes; buf is NUL-terminated after
 * the contents either way on success. */
ssize_t cpucycles_read_file_under(const char *root, const char *path,
                                  char *buf, size_t size);

#endif
