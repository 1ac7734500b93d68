/* environment.h: the library's and its tools' environment variables. */
#ifndef CPUCYCLES_ENVIRONMENT_H
#define CPUCYCLES_ENVIRONMENT_H

/* The value, or NULL when unset or the process is privileged (setuid,
 * setgid, file capabilities: secure_getenv's AT_SECURE; else real and
 * effective IDs that differ): the environment must not steer it. */
const char *cpucycles_environment(const char *name);

#endif
