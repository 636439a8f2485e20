// ACF zips as `ciq-cache import-acfs` reads them (minizip, then the
// manifest): any bytes end as a candidate set or an error, never a crash or
// a sanitizer report, and within libFuzzer's memory limit (run.sh: 2 GB).
#include "cache/acf_candidates.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/ciq-fuzz-zip-XXXXXX";
    return std::string(::mkdtemp(tmpl));
  }();
  std::string path = dir + "/input.zip";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  (void)ciq::cache::import_acf_candidates(dir + "/cache", path, "fuzz");
  return 0;
}
