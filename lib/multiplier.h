/* The multiplier of a timer whose rate nobody states (firmware left
 * CNTFRQ_EL0 0, no time-base frequency under qemu-user): cycles per tick,
 * measured against a clock as libcpucycles measures every timer's. */
#ifndef CPUCYCLES_MULTIPLIER_H
#define CPUCYCLES_MULTIPLIER_H

#define MULTIPLIER_ESTIMATES 3        /* estimates that must agree */
#define MULTIPLIER_USEC 10000         /* each at least this long ... */
#define MULTIPLIER_TICKS 1000         /* ... and this many ticks */
#define MULTIPLIER_LIMIT_USEC 1000000 /* a timer slower than that: none */

/* The multiplier fit, for measured estimates and for persecond over a
 * stated rate (n = 1): k/2^j for the smallest j from 0 to 10 (k >= 1, the
 * first estimate times 2^j rounded) such that every estimate times 2^j is
 * within 0.2 of k, libcpucycles' rule; -1 when there is none. */
double cpucycles_multiplier_of(const double *estimates, int n);

/* Cycles per tick of read, fitted over MULTIPLIER_ESTIMATES estimates of
 * persecond * microseconds / ticks; -1 when the timer is too slow or goes
 * backwards, the clock does not answer, or nothing fits.  *estimate (may
 * be NULL): the first estimate, 0 when none. */
double cpucycles_multiplier_measure(long long (*read)(void), long long persecond,
                                    double *estimate);

/* A stated rate (Hz) checked against the same clock between two paired
 * readings around the probe's sampling (doc/selection.md, step 2); *seen:
 * ticks per second, 0 when the clock could not tell. */
struct rate_window { long long usec, ticks, spread; /* spread -1: none */ };
enum rate_verdict { RATE_NOT_CHECKED, RATE_AGREES, RATE_DISAGREES };
void cpucycles_rate_window_open(struct rate_window *w, long long (*read)(void));
enum rate_verdict cpucycles_rate_window_close(const struct rate_window *w,
                                              long long (*read)(void),
                                              long long stated, double *seen);

/* The clock it reads (lib/multiplier-sys.c; tests link tests/seams.c). */
extern long long (*const cpucycles_multiplier_clock)(void);

#endif
