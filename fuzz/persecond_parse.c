/* libFuzzer target: cpucycles_persecond_parse, the strict number parser
 * behind every frequency source (/etc/cpucyclespersecond, sysfs,
 * /proc/cpuinfo, the cpucyclespersecond environment variable).
 *
 * Input: one byte choosing the unit (valid or not), then the text.
 * Failures: a crash; an accepted value outside [1e6, 1e11] Hz or with an
 * invalid unit; an accepted text outside the documented grammar (digits,
 * optionally '.' and digits, optionally trailing space/tab/CR/LF); a value
 * that disagrees with strtod; a valid, plausible text that is refused; a
 * refusal that touches *out. */
#include <assert.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "persecond.h"

static int grammar_ok(const char *t, size_t n)
{
  size_t i = 0, d = 0;
  while (i < n && t[i] >= '0' && t[i] <= '9') i++, d++;
  if (!d) return 0;
  if (i < n && t[i] == '.') {
    i++;
    d = 0;
    while (i < n && t[i] >= '0' && t[i] <= '9') i++, d++;
    if (!d) return 0;
  }
  while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) i++;
  return i == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const double units[] = { 1, 1e3, 1e6, 1e9, 0, -1, 0.5, 1e10, NAN, INFINITY };
  const char *text = (const char *) data + 1;
  size_t len;
  double unit;
  long long out = -12345;
  int accepted, grammar;
  double expected = NAN;

  if (size < 1 || size > 4096) return 0;
  unit = units[data[0] % (sizeof units / sizeof units[0])];
  len = size - 1;
  accepted = cpucycles_persecond_parse(text, len, unit, &out) == 0;
  grammar = grammar_ok(text, len);

  if (grammar) {
    char copy[4100];
    memcpy(copy, text, len);
    copy[len] = 0;
    expected = strtod(copy, 0) * unit; /* "C" locale: libFuzzer sets none */
  }
  if (accepted) {
    assert(unit >= 1 && unit <= 1e9);
    assert(out >= 1000000LL && out <= 100000000000LL);
    assert(grammar);
    assert(fabs((double) out - expected) <= 1.0 + 1e-9 * expected);
  } else {
    assert(out == -12345);
    /* Refused although well-formed, with a good unit, and well inside the
     * plausible range: a parser bug. */
    if (grammar && unit >= 1 && unit <= 1e9)
      assert(!(expected > 1e6 * (1 + 1e-9) && expected < 1e11 * (1 - 1e-9)));
  }
  return 0;
}
