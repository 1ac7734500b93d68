#include <stdio.h>
#include <cpucycles.h>

int main(void)
{
  long long t0 = cpucycles();
  /* the code to time */
  long long t1 = cpucycles();
  printf("%lld cycles with %s\n", t1 - t0, cpucycles_implementation());
  return 0;
}
