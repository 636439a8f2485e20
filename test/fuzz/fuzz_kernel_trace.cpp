// Kernel traces (tuner/formats/kernel_trace.h): a file libciq-inject wrote
// inside the user's program, or anything else put in the trace directory.
// Whatever it holds, reading it neither crashes nor makes figures wrap:
// no sum falls below its parts, shares add up to at most 1, and every
// kept duration and count is within k_max_trace_count. Names shown on a
// terminal through printable() are printable.
#include "tuner/formats/kernel_trace.h"
#include "utils/text.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace ciq::formats;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  KernelTrace trace;
  add_kernel_trace_text(trace, text, "kernels-1.jsonl");
  add_kernel_trace_text(trace, text, "kernels-2.jsonl"); // the same process twice: sums of two
  summarise_kernels(trace);
  for (const auto& r : trace.records)
    if (r.launches > k_max_trace_count || r.total_ns > k_max_trace_count || r.min_ns > k_max_trace_count ||
        r.max_ns > k_max_trace_count || r.durations_ns.size() > r.launches)
      std::abort();
  double shares = 0;
  for (const auto& k : trace.kernels) {
    if (!(k.share >= 0 && k.share <= 1) || k.stats.total_ns > trace.total_ns) std::abort();
    shares += k.share;
    for (const auto& c : k.configs)
      if (c.stats.total_ns > k.stats.total_ns || c.stats.launches > k.stats.launches) std::abort();
    if (!ciq::is_printable(ciq::printable(k.kernel)) || !ciq::is_printable(ciq::printable(k.demangled))) std::abort();
  }
  if (shares > 1 + 1e-9) std::abort();
  for (const auto& p : trace.problems)
    if (!ciq::is_printable(ciq::printable(p.message))) std::abort();
  return 0;
}
