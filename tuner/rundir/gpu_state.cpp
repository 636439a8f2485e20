#include "tuner/rundir/gpu_state.h"

#include "utils/json_number.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace ciq::tuner {

namespace {

constexpr struct {
  std::uint64_t bit;
  const char* name;
} reason_names[] = {{0x1, "gpu-idle"},          {0x2, "applications-clocks"}, {0x4, "sw-power-cap"},
                    {0x8, "hw-slowdown"},       {0x10, "sync-boost"},         {0x20, "sw-thermal-slowdown"},
                    {0x40, "hw-thermal-slowdown"}, {0x80, "hw-power-brake"},  {0x100, "display-clocks"}};

// `v` to 6 significant digits (utils/json_number.h); NaN and the
// infinities as the strings "nan", "inf", "-inf" (JSON has no such numbers).
nlohmann::ordered_json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return rounded_number(v);
}

// A number as number() wrote it; `fallback` for anything else.
double number_of(const nlohmann::json& j, double fallback) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return NAN;
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  return fallback;
}

unsigned unsigned_of(const nlohmann::json& j) { return j.is_number_unsigned() ? j.get<unsigned>() : 0; }

} // namespace

void to_json(nlohmann::ordered_json& j, const GpuState& s) {
  j = nlohmann::ordered_json::object();
  j["energy_j"] = s.energy_j < 0 ? nlohmann::ordered_json(nullptr) : number(s.energy_j);
  j["seconds"] = number(s.seconds);
  j["sm_mhz_min"] = s.sm_mhz_min;
  j["sm_mhz_max"] = s.sm_mhz_max;
  j["mem_mhz"] = s.mem_mhz;
  j["temperature_c"] = s.temperature_c;
  j["power_w"] = number(s.power_w);
  j["power_limit_w"] = number(s.power_limit_w);
  j["clock_events"] = clock_event_names(s.reasons);
  j["samples"] = s.samples;
}

void from_json(const nlohmann::json& j, GpuState& s) {
  s = GpuState{};
  if (!j.is_object()) return;
  auto member = [&](const char* name) -> const nlohmann::json& {
    static const nlohmann::json absent;
    auto it = j.find(name);
    return it == j.end() ? absent : *it;
  };
  s.read = true;
  s.energy_j = number_of(member("energy_j"), -1);
  s.seconds = number_of(member("seconds"), 0);
  s.sm_mhz_min = unsigned_of(member("sm_mhz_min"));
  s.sm_mhz_max = unsigned_of(member("sm_mhz_max"));
  s.mem_mhz = unsigned_of(member("mem_mhz"));
  s.temperature_c = unsigned_of(member("temperature_c"));
  s.power_w = number_of(member("power_w"), 0);
  s.power_limit_w = number_of(member("power_limit_w"), 0);
  if (const auto& events = member("clock_events"); events.is_string()) s.reasons = clock_event_bits(events.get<std::string>());
  if (const auto& n = member("samples"); n.is_number_integer()) s.samples = n.get<int>();
}

std::string clock_event_names(std::uint64_t reasons) {
  std::string out;
  for (const auto& r : reason_names)
    if (reasons & r.bit) out += (out.empty() ? "" : ",") + std::string(r.name);
  return out;
}

std::uint64_t clock_event_bits(const std::string& names) {
  std::uint64_t bits = 0;
  for (std::size_t start = 0; start <= names.size();) {
    std::size_t comma = names.find(',', start);
    std::string name = names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (const auto& r : reason_names)
      if (name == r.name) bits |= r.bit;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return bits;
}

std::uint64_t slowdown_reasons(std::uint64_t reasons) { return reasons & (0x4 | 0x8 | 0x10 | 0x20 | 0x40 | 0x80); }

} // namespace ciq::tuner
