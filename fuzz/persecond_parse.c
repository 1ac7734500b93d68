/* libFuzzer target: cpucycles_persecond_parse, the strict number parser
 * behind every frequency source (/etc/cpucyclespersecond, sysfs,
 * /proc/cpuinfo, the cpucyclespersecond environment variable).
 *
 * Input: one byte choosing the form (low 2 bits: integer, decimal,
 * setting, or an invalid form) and the unit (next 4 bits, minus 1: a power
 * of ten from -1 to 14, valid from 0 to 9), then the text.
 * Failures: a crash; an accepted value outside [1e6, 1e11] Hz or with an
 * invalid form or unit; an accepted text outside the documented grammar of
 * its form (checked here by an independent reading of doc/persecond.md);
 * a value that disagrees with strtod; a valid, plausible text that is
 * refused; a refusal that touches *out. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "persecond.h"

static int ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static int digit(char c) { return c >= '0' && c <= '9'; }

/* Whether t[0..n) is in the grammar of form; the number itself, for
 * strtod, is t[*from..*to). */
static int grammar_ok(const char *t, size_t n, int form, size_t *from, size_t *to)
{
  size_t i = 0, d = 0;
  if (form == PERSECOND_SETTING) while (i < n && ws(t[i])) i++;
  *from = i;
  while (i < n && digit(t[i])) i++, d++;
  if (!d) return 0;
  if (form != PERSECOND_INTEGER && i < n && t[i] == '.') {
    i++;
    d = 0;
    while (i < n && digit(t[i])) i++, d++;
    if (!d) return 0;
  }
  if (form == PERSECOND_SETTING && i < n && (t[i] == 'e' || t[i] == 'E')) {
    i++;
    if (i < n && (t[i] == '+' || t[i] == '-')) i++;
    d = 0;
    while (i < n && digit(t[i])) i++, d++;
    if (!d) return 0;
  }
  *to = i;
  if (form == PERSECOND_SETTING) return i == n || ws(t[i]);
  while (i < n && ws(t[i])) i++;
  return i == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *text = (const char *) data + 1;
  size_t len, from = 0, to = 0;
  int form, unit, valid_args, accepted, grammar = 0;
  long long out = -12345;
  double expected = NAN;

  if (size < 1 || size > 4096) return 0;
  form = data[0] & 3;
  if (form == 3) form = -1;
  unit = ((data[0] >> 2) & 15) - 1;
  valid_args = form >= 0 && unit >= 0 && unit <= 9;
  len = size - 1;
  accepted = cpucycles_persecond_parse(text, len, form, unit, &out) == 0;
  if (form >= 0) grammar = grammar_ok(text, len, form, &from, &to);

  if (grammar) {
    char copy[4100];
    memcpy(copy, text + from, to - from);
    copy[to - from] = 0;
    /* "C" locale: libFuzzer sets none */
    expected = strtod(copy, 0) * pow(10, unit);
  }
  if (accepted) {
    assert(valid_args);
    assert(out >= 1000000LL && out <= 100000000000LL);
    assert(grammar);
    assert(fabs((double) out - expected) <= 1.0 + 1e-9 * expected);
  } else {
    assert(out == -12345);
    /* Refused although well-formed, with a good form and unit, and well
     * inside the plausible range: a parser bug. */
    if (grammar && valid_args)
      assert(!(expected > 1e6 * (1 + 1e-9) && expected < 1e11 * (1 - 1e-9)));
  }
  return 0;
}
