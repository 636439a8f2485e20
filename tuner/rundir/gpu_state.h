// What the GPU ran under during one benchmark run (read by NVML,
// measure/gpu_monitor.h), and its one JSON form: the member `gpu` of a
// journal line, one object per benchmark run. Here, below the journal, so
// that the journal writes and reads the struct itself rather than text.
//
// Numbers are written to 6 significant digits, whole ones as integers
// ("energy_j":10). JSON has no NaN or infinity: such a value is written as
// the string "nan", "inf" or "-inf" and read back as that double, so a line
// always stays readable. energy_j < 0 (the counter is not supported) is
// written as null.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace ciq::tuner {

struct GpuState {
  bool read = false;              // NVML answered (a state not read is never written)
  double energy_j = -1;           // -1: the counter is not supported
  double seconds = 0;             // wall time between the two energy reads
  unsigned sm_mhz_min = 0, sm_mhz_max = 0, mem_mhz = 0;  // SM: while busy (idle samples only if all were)
  unsigned temperature_c = 0;     // the highest seen
  double power_w = 0;             // mean of the samples
  double power_limit_w = 0;
  std::uint64_t reasons = 0;      // every clock-event reason seen (NVML bits)
  int samples = 0;

  bool operator==(const GpuState&) const = default;
};

/// {"energy_j":..,"seconds":..,"sm_mhz_min":..,"sm_mhz_max":..,"mem_mhz":..,
/// "temperature_c":..,"power_w":..,"power_limit_w":..,"clock_events":"a,b",
/// "samples":..}, members in that order.
void to_json(nlohmann::ordered_json& j, const GpuState& state);
/// The inverse of to_json (`read` set); a member absent or of another type
/// keeps its default. Clock-event names it does not know are dropped.
void from_json(const nlohmann::json& j, GpuState& state);

/// The names of NVML's clock-event reason bits in `reasons` ("sw-power-cap",
/// "hw-thermal-slowdown", ...), comma-separated; "" for none.
std::string clock_event_names(std::uint64_t reasons);
/// The bits clock_event_names() names in `names` (unknown names: none).
std::uint64_t clock_event_bits(const std::string& names);
/// The reasons that slow the clocks down (all but idle and the settings').
std::uint64_t slowdown_reasons(std::uint64_t reasons);

} // namespace ciq::tuner
