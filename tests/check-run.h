/* Runs a Check suite, each test in its own forked process (Check's
 * default), and turns the result into the program's exit status. */
#ifndef CHECK_RUN_H
#define CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite *s)
{
  SRunner *r = srunner_create(s);
  int failed;
  srunner_run_all(r, CK_NORMAL);
  failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
