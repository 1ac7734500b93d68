/* A loadable module that takes 64 bytes of glibc's static TLS reserve
 * (initial-exec thread-locals, DF_STATIC_TLS), for test-unload: loaded as
 * many times as glibc allows (copies under other names), it uses the
 * reserve up, as a plug-in host's other modules may have done before it
 * loads libcpucycles.so.1. */
#include <config.h>

static __thread char hog[64] __attribute__((tls_model("initial-exec")));

/* what a module exports: its thread-local in use */
__attribute__((visibility("default"))) int tls_hog_touch(void);

int tls_hog_touch(void)
{
  return ++hog[63];
}
