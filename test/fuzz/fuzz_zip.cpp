// ACF zips as `ciq-cache import-acfs` reads them (minizip, then the
// manifest): any bytes end as a candidate set or an error, never a crash or
// a sanitizer report, and within libFuzzer's memory limit (run.sh: 2 GB).
#include "cache/acf_candidates.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <string>
#include <unistd.h>

namespace {

// One scratch folder for the process, in $TMPDIR (else /tmp), removed when
// libFuzzer exits at the end of its time (a crash keeps it, beside its input).
std::string scratch;

void remove_scratch() {
  std::error_code ignored;
  if (!scratch.empty()) std::filesystem::remove_all(scratch, ignored);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/ciq-fuzz-zip-XXXXXX";
    if (!::mkdtemp(tmpl.data())) std::abort();
    scratch = tmpl;
    std::atexit(remove_scratch);
    return tmpl;
  }();
  std::string path = dir + "/input.zip";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  (void)ciq::cache::import_acf_candidates(dir + "/cache", path, "fuzz");
  return 0;
}
