/* fixture-tree.h: fixture trees for the tests that read /etc, /proc and
 * /sys under a root directory (test-explain, test-perf). */
#ifndef CPUCYCLES_TESTS_FIXTURE_TREE_H
#define CPUCYCLES_TESTS_FIXTURE_TREE_H

/* Write text to ROOT followed by PATH (which starts with '/'), making the
 * directories on the way; the test fails if the file cannot be written. */
void fixture_put(const char *root, const char *path, const char *text);

/* Remove DIR and everything under it (symbolic links are not followed);
 * nothing when it does not exist. */
void fixture_remove(const char *dir);

#endif
