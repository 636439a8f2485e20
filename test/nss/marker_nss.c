/* A stand-in NSS module (libnss_ciqtest.so.2) that only says it was loaded:
   its constructor creates the file $CIQ_TEST_NSS_MARK. Named first in a
   private /etc/nsswitch.conf, it shows whether a ciq tool loads the host's
   NSS modules (test/lit/static-host-lookup.test). It answers no lookups:
   glibc goes on to the next source. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void say_loaded(void) {
  const char* mark = getenv("CIQ_TEST_NSS_MARK");
  if (mark) {
    int fd = open(mark, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
  }
}
