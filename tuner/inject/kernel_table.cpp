#include "tuner/inject/kernel_table.h"

#include "utils/elf.h"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <nlohmann/json.hpp>

namespace ciq::inject {

using json = nlohmann::ordered_json;  // members in the documented order

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !readable) return mangled;
  std::string out(readable);
  std::free(readable);
  return out;
}

void KernelTable::clear_launches() {
  groups_.clear();
  configs_ = durations_ = 0;
  dropped_launches_ = dropped_records_ = incomplete_ = 0;
}

void KernelTable::add_launch(const KernelLaunch& launch) {
  if (launch.start_ns == 0 || launch.end_ns <= launch.start_ns) {
    ++incomplete_;
    return;
  }
  Config config{launch.device, launch.grid, launch.block, launch.dynamic_smem};
  auto by_name = groups_.find(launch.name);
  Group* group = nullptr;
  if (by_name != groups_.end()) {
    if (auto it = by_name->second.find(config); it != by_name->second.end()) group = &it->second;
  }
  if (!group) {
    if (configs_ >= max_configs) {
      ++dropped_launches_;
      return;
    }
    if (by_name == groups_.end()) by_name = groups_.emplace(std::string(launch.name), std::map<Config, Group>()).first;
    group = &by_name->second[config];
    ++configs_;
    group->static_smem = launch.static_smem;
    group->registers = launch.registers;
    group->local_bytes = launch.local_bytes;
  }
  std::uint64_t duration = launch.end_ns - launch.start_ns;
  ++group->launches;
  group->total_ns += duration;
  group->min_ns = std::min(group->min_ns, duration);
  group->max_ns = std::max(group->max_ns, duration);
  group->first_start_ns = std::min(group->first_start_ns, launch.start_ns);
  group->last_end_ns = std::max(group->last_end_ns, launch.end_ns);
  if (group->durations_ns.size() < max_durations_per_config && durations_ < max_durations_total) {
    group->durations_ns.push_back(duration);
    ++durations_;
  } else {
    ++dropped_launches_;
  }
}

void KernelTable::add_module(std::uint32_t id, std::string_view image) {
  Module m{id, is_elf_image(image), image.size(), image_xxh128(image), 0};
  if (m.elf) {
    auto hashes = kernel_code_hashes(image);
    m.kernels = hashes.size();
    for (auto& [name, code] : hashes) code_by_name_[name].push_back({id, code});
  }
  modules_.push_back(m);
}

std::string KernelTable::render(const ProcessFacts& facts) const {
  // Invalid UTF-8 (an exe path, a name) is replaced, never an exception.
  auto line = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; };
  std::string out = line({{"ciq_kernel_trace", 1},
                          {"pid", facts.pid},
                          {"exe", facts.exe},
                          {"status", facts.status},
                          {"reason", facts.reason},
                          {"dropped_launches", dropped_launches_},
                          {"dropped_records", dropped_records_},
                          {"incomplete_records", incomplete_},
                          {"module_identity", facts.module_identity}});
  for (const Module& m : modules_)
    out += line({{"module", m.id},
                 {"image", m.elf ? "elf" : "other"},
                 {"bytes", m.bytes},
                 {"xxh128", hash_hex(m.xxh128)},
                 {"kernels", m.kernels}});
  for (const auto& [name, configs] : groups_) {
    // Tie the name to its code: one module holding it, or several with the
    // same bytes for it (the hash is still known, the module is not).
    std::string code;
    std::int64_t module = -1;
    if (auto seen = code_by_name_.find(name); seen != code_by_name_.end()) {
      const auto& all = seen->second;
      bool same = std::all_of(all.begin(), all.end(), [&](const CodeSeen& c) { return c.code == all.front().code; });
      if (same) code = hash_hex(all.front().code);
      if (all.size() == 1) module = all.front().module;
    }
    std::string readable = demangle(name);
    for (const auto& [config, g] : configs) {
      out += line({{"kernel", name},
                   {"demangled", readable},
                   {"device", config.device},
                   {"grid", config.grid},
                   {"block", config.block},
                   {"dynamic_smem", config.dynamic_smem},
                   {"static_smem", g.static_smem},
                   {"registers", g.registers},
                   {"local_bytes", g.local_bytes},
                   {"launches", g.launches},
                   {"total_ns", g.total_ns},
                   {"min_ns", g.min_ns},
                   {"max_ns", g.max_ns},
                   {"first_start_ns", g.first_start_ns},
                   {"last_end_ns", g.last_end_ns},
                   {"durations_ns", g.durations_ns},
                   {"code_xxh128", code},
                   {"module", module}});
    }
  }
  return out;
}

} // namespace ciq::inject
