/* A program using libcpucycles as its users do, built by
 * tests/check-windows.sh with pkg-config's flags: against the DLL, and
 * statically.  It reads the counter through the data symbol cpucycles
 * both by a call and by taking its value. */
#include <stdio.h>
#include <cpucycles.h>

int main(void)
{
  long long (*volatile read)(void) = cpucycles;
  long long t0 = cpucycles();
  long long t1 = read();
  long long t2 = cpucycles();
  printf("%s %s %lld\n", cpucycles_version(), cpucycles_implementation(),
         cpucycles_persecond());
  return t0 <= t1 && t1 <= t2 && cpucycles_persecond() > 0 ? 0 : 1;
}
