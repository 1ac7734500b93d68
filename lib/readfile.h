/* readfile.h: the small files of /etc, /proc and /sys, under a root that
 * tests replace with a fixture tree.  No heap and no stdio (fopen
 * allocates): open() and read() into the caller's buffer. */
#ifndef CPUCYCLES_READFILE_H
#define CPUCYCLES_READFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Tries of a call interrupted (EINTR): a seccomp filter may answer EINTR
 * to every call of a kind, and retrying forever would hang the first call. */
#define CPUCYCLES_EINTR_TRIES 100

/* ROOT followed by PATH (root "" or NULL: the real system), opened
 * read-only, close-on-exec, no controlling terminal, non-blocking (a FIFO
 * planted there must not hang the first call); -1 with errno. */
int cpucycles_open_under(const char *root, const char *path);

/* PATH relative to the open directory DIRFD, opened as above. */
int cpucycles_openat_retrying(int dirfd, const char *path);

/* read(2), made again on EINTR (then -1 with errno EINTR). */
ssize_t cpucycles_read_retrying(int fd, char *buf, size_t len);

/* The start of fd, or of ROOT/PATH, into buf (not NUL-terminated) until
 * end of file or until buf is full (*full: the file may go on): the length
 * read, or -1.  Reads again after short reads (normal for proc, sysfs). */
ssize_t cpucycles_read_fd_start(int fd, char *buf, size_t size, int *full);
ssize_t cpucycles_read_file_start(const char *root, const char *path,
                                  char *buf, size_t size, int *full);

/* Called with each line, without its newline; nonzero stops the reading. */
typedef int cpucycles_line_fn(const char *line, size_t len, void *arg);

/* The lines of ROOT/PATH among its first limit bytes, through buf[size]
 * (on the first call's stack).  A line longer than buf is skipped, one cut
 * by the limit is not passed, the last may lack its newline.  0; -1 with
 * errno when the file cannot be opened, -2 when a read failed part way. */
int cpucycles_read_lines(const char *root, const char *path, size_t limit,
                         char *buf, size_t size, cpucycles_line_fn *line,
                         void *arg);

#endif
