/* A client that prints, then traces, then prints again, with stdout fully
 * buffered (as it is on a pipe or a file): tests/trace-order.sh checks
 * that the trace lines come between its two lines, as with libcpucycles,
 * which prints its trace with stdio. */
#include <stdio.h>
#include "cpucycles.h"

int main(void)
{
  static char buffer[4096];
  setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  printf("client before\n");
  cpucycles_tracesetup();
  cpucycles();
  printf("client after\n");
  return fflush(stdout) == 0 ? 0 : 1;
}
