// Relocation, the plan's text and the weights of captures (plan.h).
#include "tuner/replay/plan.h"

#include "utils/text.h"

#include "utils/files.h"
#include "utils/hash.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace ciq::replay {

namespace {

std::string hex_address(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string dims(const std::array<std::uint32_t, 3>& d) {
  return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
}

} // namespace

Result<std::vector<std::uint8_t>> relocated_params(const formats::Capture& capture,
                                                   const std::vector<std::uint64_t>& new_bases) {
  if (new_bases.size() != capture.allocations.size())
    return make_error("invalid", "relocation needs one new base per allocation: " + std::to_string(new_bases.size()) +
                                     " given for " + std::to_string(capture.allocations.size()));
  std::vector<std::uint8_t> bytes = capture.param_bytes;
  for (const auto& p : capture.pointers) {
    // read_capture checked: the parameter exists, is 8 bytes and lies inside
    // param_bytes; the allocation exists.
    std::uint64_t value = new_bases[p.allocation] + p.offset;
    std::uint64_t at = capture.params[p.param].offset;
    for (int b = 0; b < 8; ++b) bytes[at + b] = std::uint8_t(value >> (8 * b));
  }
  return bytes;
}

std::vector<std::uint32_t> params_into(const formats::Capture& capture, std::uint32_t allocation) {
  std::vector<std::uint32_t> out;
  for (const auto& p : capture.pointers)
    if (p.allocation == allocation) out.push_back(p.param);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string describe_plan(const formats::Capture& c) {
  std::string out;
  out += "capture: " + printable(c.dir) + "\n";
  out += "kernel: " + printable(c.kernel) + "\n";
  out += "launch: grid " + dims(c.grid) + ", block " + dims(c.block) + ", dynamic_smem " + std::to_string(c.dynamic_smem) +
         " bytes" + (c.dynamic_smem > 48 * 1024 ? " (over 48 KiB: the replay raises the kernel's limit)" : "") + "\n";
  out += "captured on: device " + std::to_string(c.device) + (c.device_name.empty() ? "" : " (" + printable(c.device_name) + ")") +
         ", sm_" + std::to_string(c.compute_capability[0]) + std::to_string(c.compute_capability[1]) + "\n";
  out += "weight: " + std::to_string(capture_weight(c)) + " launch(es) of this configuration\n";
  out += "params: " + std::to_string(c.params.size()) + " (" + std::to_string(c.param_bytes.size()) + " bytes)\n";
  // Each parameter's pointer and each allocation's parameters, in one pass
  // over the pointers: a capture may list hundreds of thousands.
  std::vector<const formats::CapturePointer*> pointer_of(c.params.size(), nullptr);
  std::vector<std::vector<std::uint32_t>> params_of(c.allocations.size());
  for (const auto& q : c.pointers) {
    if (q.param < pointer_of.size() && !pointer_of[q.param]) pointer_of[q.param] = &q;
    if (q.allocation < params_of.size()) params_of[q.allocation].push_back(q.param);
  }
  for (std::size_t i = 0; i < c.params.size(); ++i) {
    const auto& p = c.params[i];
    out += "  param " + std::to_string(i) + ": offset " + std::to_string(p.offset) + ", size " + std::to_string(p.size) + ": ";
    if (const formats::CapturePointer* ptr = pointer_of[i]) {
      out += "pointer to allocation " + std::to_string(ptr->allocation) + " + " + std::to_string(ptr->offset) + " (was " +
             hex_address(c.allocations[ptr->allocation].base + ptr->offset) + ")\n";
    } else {
      out += "bytes " + to_hex(c.param_bytes.data() + p.offset, std::size_t(p.size)) + " (unchanged)\n";
    }
  }
  out += "allocations: " + std::to_string(c.allocations.size()) + "\n";
  for (std::size_t i = 0; i < c.allocations.size(); ++i) {
    const auto& a = c.allocations[i];
    std::vector<std::uint32_t>& params = params_of[i];
    std::sort(params.begin(), params.end());
    params.erase(std::unique(params.begin(), params.end()), params.end());
    std::string users;
    for (auto p : params) users += (users.empty() ? "" : ", ") + std::to_string(p);
    out += "  allocation " + std::to_string(i) + ": " + std::to_string(a.size) + " bytes from " + printable(base_name(a.file)) +
           " (was " + hex_address(a.base) + "; param(s) " + (users.empty() ? "none" : users) + ")\n";
  }
  out += "device memory: " + std::to_string(2 * c.bytes()) + " bytes (each allocation twice: pristine and working copy)\n";
  return out;
}

std::uint64_t capture_weight(const formats::Capture& capture) {
  return capture.config_launches == 0 ? 1 : capture.config_launches;
}

Result<double> weighted_total_ms(const std::vector<formats::Capture>& captures, const std::vector<double>& medians_ms) {
  if (captures.empty() || captures.size() != medians_ms.size())
    return make_error("invalid", "a total needs one median per capture: " + std::to_string(medians_ms.size()) + " for " +
                                     std::to_string(captures.size()) + " capture(s)");
  double sum = 0, weights = 0;
  for (std::size_t i = 0; i < captures.size(); ++i) {
    double w = double(capture_weight(captures[i]));
    sum += medians_ms[i] * w;
    weights += w;
  }
  return sum / weights;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

} // namespace ciq::replay
