#include "tuner/rundir/profile_file.h"

#include "utils/files.h"
#include "utils/json.h"
#include "utils/json_members.h"

#include <nlohmann/json.hpp>

namespace ciq::tuner {

std::string profile_json(const ProfileFile& profile) {
  using json = nlohmann::ordered_json;
  json processes = json::array(), kernels = json::array();
  for (const auto& p : profile.processes)
    processes.push_back({{"pid", p.pid}, {"exe", p.exe}, {"status", p.status}, {"reason", p.reason}});
  for (const auto& k : profile.kernels) {
    json origins = json::array();
    for (const auto& o : k.origins) origins.push_back({{"key", o.key}, {"input", o.input}, {"target", o.target}});
    kernels.push_back({{"kernel", k.kernel}, {"demangled", k.demangled}, {"share", json_number(k.share)},
                       {"cumulative", json_number(k.cumulative)}, {"launches", k.launches}, {"total_ns", k.total_ns},
                       {"median_ns", json_number(k.median_ns)}, {"min_ns", k.min_ns}, {"max_ns", k.max_ns},
                       {"registers", k.registers ? json(*k.registers) : json(nullptr)}, {"configs", k.configs},
                       {"processes", k.processes}, {"origins", std::move(origins)}, {"code_xxh128", k.code_xxh128}});
  }
  return json_line({{"format", k_profile_format}, {"total_ns", profile.total_ns}, {"processes", std::move(processes)},
                    {"kernels", std::move(kernels)}});
}

namespace {

using json_members::string_member;
using json_members::unsigned_member;

double number_or_nan(const nlohmann::json& j, const char* member) { return json_members::number_member(j, member, NAN); }

ProfileKernel kernel_of(const nlohmann::json& k) {
  ProfileKernel r;
  r.kernel = string_member(k, "kernel");
  r.demangled = string_member(k, "demangled");
  r.share = number_or_nan(k, "share");
  r.cumulative = number_or_nan(k, "cumulative");
  r.launches = unsigned_member(k, "launches");
  r.total_ns = unsigned_member(k, "total_ns");
  r.min_ns = unsigned_member(k, "min_ns");
  r.max_ns = unsigned_member(k, "max_ns");
  r.median_ns = number_or_nan(k, "median_ns");
  if (auto it = k.find("registers"); it != k.end() && it->is_number_unsigned()) r.registers = it->get<std::uint64_t>();
  r.configs = unsigned_member(k, "configs");
  r.processes = unsigned_member(k, "processes");
  if (auto it = k.find("origins"); it != k.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_object()) r.origins.push_back({string_member(o, "key"), string_member(o, "input"), string_member(o, "target")});
  if (auto it = k.find("code_xxh128"); it != k.end() && it->is_array())
    for (const auto& h : *it)
      if (h.is_string()) r.code_xxh128.push_back(h.get<std::string>());
  return r;
}

} // namespace

Result<ProfileFile> read_profile_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("parse", path + ": not a JSON object");
  if (auto f = j.find("format"); f != j.end() && !(f->is_string() && f->get<std::string>() == k_profile_format))
    return make_error("parse", path + ": not a profile of format " + std::string(k_profile_format) + " (\"format\": " + f->dump() + ")");
  auto kernels = j.find("kernels");
  if (kernels == j.end() || !kernels->is_array()) return make_error("parse", path + " is not a profile (no \"kernels\" array)");
  ProfileFile p;
  p.total_ns = unsigned_member(j, "total_ns");
  if (auto it = j.find("processes"); it != j.end() && it->is_array())
    for (const auto& q : *it)
      if (q.is_object())
        p.processes.push_back({q.contains("pid") && q["pid"].is_number_integer() ? q["pid"].get<std::int64_t>() : 0,
                               string_member(q, "exe"), string_member(q, "status"), string_member(q, "reason")});
  for (const auto& k : *kernels) {
    if (!k.is_object() || string_member(k, "kernel").empty()) return make_error("parse", path + ": a kernel without its name");
    p.kernels.push_back(kernel_of(k));
  }
  return p;
}

} // namespace ciq::tuner
