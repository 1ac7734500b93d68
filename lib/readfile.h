/* readfile.h: reading the small files of /etc, /proc and /sys, under a
 * root directory that tests replace with a fixture tree.  No heap, no
 * stdio (fopen allocates): open(O_CLOEXEC) and read() into the caller's
 * buffer.
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_READFILE_H
#define CPUCYCLES_READFILE_H

#include <stddef.h>
#include <sys/types.h>

/* How many times a system call that a signal interrupted (EINTR) is
 * made again before the source is given up.  A signal can interrupt a
 * call now and then, but a seccomp filter may answer EINTR to every call
 * of a kind: retrying forever would hang the first call. */
#define CPUCYCLES_EINTR_TRIES 100

/* ROOT followed by PATH (root "" or NULL: the real system), opened
 * read-only, close-on-exec, without becoming the controlling terminal,
 * non-blocking (a FIFO planted there must not hang the first call;
 * regular, proc and sysfs files ignore the flag), again when a signal
 * interrupts the open (CPUCYCLES_EINTR_TRIES times in all at most).
 * Returns the descriptor, or -1 with errno set. */
int cpucycles_open_under(const char *root, const char *path);

#ifndef _WIN32
/* PATH relative to the open directory DIRFD, opened as above. */
int cpucycles_openat_retrying(int dirfd, const char *path);
#endif

/* read(2), again when a signal interrupts it (CPUCYCLES_EINTR_TRIES
 * times in all at most: then -1 with errno EINTR). */
ssize_t cpucycles_read_retrying(int fd, char *buf, size_t len);

/* The start of open file fd into buf, until end of file or until buf is
 * full, as cpucycles_read_file_start() reads; fd is left open. */
ssize_t cpucycles_read_fd_start(int fd, char *buf, size_t size, int *full);

/* The start of ROOT/PATH into buf, until end of file or until buf is full
 * (short reads are normal for proc and sysfs).  Returns the length read,
 * or -1 on error; *full says whether buf filled up (the file may go on).
 * buf is not NUL-terminated. */
ssize_t cpucycles_read_file_start(const char *root, const char *path,
                                  char *buf, size_t size, int *full);

#endif
