/* environment.h: the library's and its tools' reading of environment
 * variables.
 *
 * Internal to the library: not exported from the shared library. */
#ifndef CPUCYCLES_ENVIRONMENT_H
#define CPUCYCLES_ENVIRONMENT_H

/* The value of the variable, or NULL when it is unset or the process is
 * privileged (setuid, setgid, file capabilities: secure_getenv's AT_SECURE;
 * without secure_getenv, real and effective IDs that differ): the caller's
 * environment must not steer such a program. */
const char *cpucycles_environment(const char *name);

#endif
