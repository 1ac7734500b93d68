/* The CPU frequency estimate behind cpucycles_persecond().
 *
 * Sources are tried in a fixed order (doc/persecond.md); every value is
 * parsed strictly and checked for plausibility, and a source that fails
 * falls through to the next.  No heap, no stdio, no child processes. */
#ifndef CPUCYCLES_PERSECOND_H
#define CPUCYCLES_PERSECOND_H

#include <stddef.h>

/* Close to multiples of 24 MHz, 25 MHz and 19.2 MHz, the common crystals. */
#define CPUCYCLES_PERSECOND_DEFAULT 2399987654LL

/* root: prefix prepended to /etc, /proc and /sys paths ("" = the real system;
   tests pass a fixture dir; NULL is taken as "").  The sysctl source is
   consulted only for the real system (root ""), since it cannot be redirected.
   envvalue: the value of the environment variable cpucyclespersecond, or NULL
   when unset (the caller reads it with secure_getenv).
   Never returns <= 0. */
long long cpucycles_persecond_estimate(const char *root, const char *envvalue);

/* The strict parser shared by every source.  text[0..len) must be decimal
   digits, optionally followed by '.' and at least one more digit, optionally
   followed by whitespace (space, tab, CR, LF) and nothing else: no sign, no
   leading whitespace, no hex, no exponent, no "nan"/"inf".  The number is
   multiplied by unit (Hz per unit: 1, 1e3, 1e6; a unit outside [1, 1e9] is
   refused) and must then lie in [1e6, 1e11] Hz.  Returns 0 and stores the
   value rounded to the nearest integer in *out, or returns -1 and leaves
   *out alone.  Locale-independent. */
int cpucycles_persecond_parse(const char *text, size_t len, double unit,
                              long long *out);

#endif
