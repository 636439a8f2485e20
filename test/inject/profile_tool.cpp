// Prints what tuner/formats reads, for lit tests (the tuner's own
// `profile` command comes later):
//
//   ciq-test-profile hashes CUBIN   one "NAME HASH" line per function's code
//   ciq-test-profile trace DIR      the merged trace: processes, kernels, problems
//   ciq-test-profile capture DIR    the captures under DIR (CIQ_CAPTURE's), as
//                                   tuner/formats/capture.h reads them, with
//                                   each memory file's first bytes and whether
//                                   its digest is the recorded one
#include "utils/elf.h"
#include "tuner/formats/capture.h"
#include "tuner/formats/kernel_trace.h"
#include "utils/files.h"
#include "utils/hash.h"

#include <algorithm>
#include <cstdio>
#include <string>

using namespace ciq;

static std::string dims(const std::array<std::uint32_t, 3>& d) {
  return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

static int print_captures(const std::string& root) {
  auto set = formats::read_capture_set(root);
  if (!set) {
    std::fprintf(stderr, "error: %s\n", set.error().message.c_str());
    return 1;
  }
  for (const auto& index : set->indexes) {
    std::printf("index pid %lld status %s reason %s\n", (long long)index.pid, index.status.c_str(), index.reason.c_str());
    for (const auto& e : index.entries)
      std::printf("entry %s grid %s block %s smem %u launches %llu captured %s refused %s\n", e.kernel.c_str(),
                  dims(e.grid).c_str(), dims(e.block).c_str(), e.dynamic_smem, (unsigned long long)e.launches,
                  e.captured.empty() ? "-" : e.captured.c_str(), e.refused.empty() ? "-" : e.refused.c_str());
  }
  for (const auto& c : set->captures) {
    std::printf("capture %s kernel %s api %s grid %s block %s smem %u device %d %s cc %d.%d launches %llu bytes %llu\n",
                base_name(c.dir).c_str(), c.kernel.c_str(), c.launch_api.c_str(), dims(c.grid).c_str(),
                dims(c.block).c_str(), c.dynamic_smem, c.device, c.device_name.c_str(), c.compute_capability[0],
                c.compute_capability[1], (unsigned long long)c.config_launches, (unsigned long long)c.bytes());
    std::printf("  param_bytes %s\n", to_hex(c.param_bytes.data(), c.param_bytes.size()).c_str());
    for (std::size_t i = 0; i < c.params.size(); ++i)
      std::printf("  param %zu offset %llu size %llu\n", i, (unsigned long long)c.params[i].offset,
                  (unsigned long long)c.params[i].size);
    for (const auto& p : c.pointers)
      std::printf("  pointer param %u allocation %u offset %llu\n", p.param, p.allocation, (unsigned long long)p.offset);
    for (std::size_t i = 0; i < c.allocations.size(); ++i) {
      const auto& a = c.allocations[i];
      auto bytes = read_file(a.file);
      std::string head = bytes ? to_hex(reinterpret_cast<const std::uint8_t*>(bytes->data()), std::min<std::size_t>(bytes->size(), 8)) : "?";
      std::string digest = bytes ? to_hex(xxh128(*bytes)) : "";
      std::printf("  allocation %zu size %llu file %s first %s before %s after %s\n", i, (unsigned long long)a.size,
                  base_name(a.file).c_str(), head.c_str(), digest == a.before_xxh128 ? "matches-file" : "differs-from-file",
                  a.after_xxh128 == a.before_xxh128 ? "unchanged" : "changed");
    }
  }
  for (const auto& problem : set->problems) std::printf("problem %s\n", problem.c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s hashes CUBIN | trace DIR | capture DIR\n", argv[0]);
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
    auto trace = formats::read_kernel_trace(argv[2]);
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
  if (command == "capture") return print_captures(argv[2]);
  std::fprintf(stderr, "unknown command %s\n", command.c_str());
  return 2;
}
