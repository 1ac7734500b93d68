/* Fixture trees (fixture-tree.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture-tree.h"

void fixture_put(const char *root, const char *path, const char *text)
{
  char full[1024];
  char *slash;
  FILE *f;

  ck_assert_int_lt(snprintf(full, sizeof full, "%s%s", root, path),
                   (int) sizeof full);
  for (slash = strchr(full + strlen(root) + 1, '/'); slash;
       slash = strchr(slash + 1, '/')) {
    *slash = 0;
    mkdir(full, 0700);
    *slash = '/';
  }
  f = fopen(full, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
  (void) st; (void) flag; (void) ftw;
  if (remove(path) != 0) perror(path);
  return 0;
}

void fixture_remove(const char *dir)
{
  struct stat st;
  if (lstat(dir, &st) == 0) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
