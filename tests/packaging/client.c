/* A program as a user of the installed library writes it: only the
 * public header, found and linked through pkg-config.  It checks that the
 * five API symbols resolve and behave, and exits 0 on success. */
#include <stdio.h>
#include <string.h>
#include <cpucycles.h>

int main(void)
{
  const char *version = cpucycles_version();
  const char *implementation;
  long long persecond, t0, t1;

  if (version == NULL || strlen(version) == 0) {
    fprintf(stderr, "client: empty cpucycles_version()\n");
    return 1;
  }
  t0 = cpucycles();
  t1 = cpucycles();
  implementation = cpucycles_implementation();
  persecond = cpucycles_persecond();
  if (implementation == NULL || strlen(implementation) == 0) {
    fprintf(stderr, "client: empty cpucycles_implementation()\n");
    return 1;
  }
  /* default-zero, the last resort, never advances: anything else must. */
  if (t1 < t0) {
    fprintf(stderr, "client: counter went backwards (%lld, %lld)\n", t0, t1);
    return 1;
  }
  if (persecond <= 0) {
    fprintf(stderr, "client: cpucycles_persecond() = %lld\n", persecond);
    return 1;
  }
  printf("client: libcpucycles %s, counter %s, %lld cycles/second\n",
         version, implementation, persecond);
  return 0;
}
