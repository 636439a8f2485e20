// Prints what tuner/profile reads, for lit tests (the tuner's own
// `profile` command comes later):
//
//   ciq-test-profile hashes CUBIN   one "NAME HASH" line per function's code
//   ciq-test-profile trace DIR      the merged trace: processes, kernels, problems
#include "utils/elf.h"
#include "tuner/profile/kernel_trace.h"
#include "utils/files.h"

#include <cstdio>
#include <string>

using namespace ciq;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s hashes CUBIN | trace DIR\n", argv[0]);
    return 2;
  }
  std::string command = argv[1];
  if (command == "hashes") {
    auto image = read_file(argv[2]);
    if (!image) {
      std::fprintf(stderr, "error: %s\n", image.error().message.c_str());
      return 1;
    }
    std::printf("elf %s\n", is_elf_image(*image) ? "yes" : "no");
    for (const auto& [name, hash] : kernel_code_hashes(*image))
      std::printf("%s %s\n", name.c_str(), hash_hex(hash).c_str());
    return 0;
  }
  if (command == "trace") {
    auto trace = profile::read_kernel_trace(argv[2]);
    if (!trace) {
      std::fprintf(stderr, "error: %s\n", trace.error().message.c_str());
      return 1;
    }
    for (const auto& p : trace->processes)
      std::printf("process %lld status %s reason %s | modules %s | dropped %llu/%llu\n", (long long)p.pid,
                  p.status.c_str(), p.reason.c_str(), p.module_identity.c_str(),
                  (unsigned long long)p.dropped_launches, (unsigned long long)p.dropped_records);
    for (const auto& k : trace->kernels)
      std::printf("kernel %s launches %llu total_ns %llu median_ns %.1f share %.3f\n", k.kernel.c_str(),
                  (unsigned long long)k.stats.launches, (unsigned long long)k.stats.total_ns, k.stats.median_ns, k.share);
    for (const auto& problem : trace->problems)
      std::printf("problem %s: %s\n", problem.where.c_str(), problem.message.c_str());
    std::printf("timed %s%s%s\n", trace->timed() ? "yes" : "no", trace->timed() ? "" : ": ",
                trace->no_timing_reason().c_str());
    return 0;
  }
  std::fprintf(stderr, "unknown command %s\n", command.c_str());
  return 2;
}
