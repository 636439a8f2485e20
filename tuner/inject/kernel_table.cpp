#include "tuner/inject/kernel_table.h"

#include "tuner/formats/kernel_trace_lines.h"

#include "utils/elf.h"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>

namespace ciq::inject {


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
  formats::TraceProcess process;
  process.pid = facts.pid;
  process.exe = facts.exe;
  process.status = facts.status;
  process.reason = facts.reason;
  process.dropped_launches = dropped_launches_;
  process.dropped_records = dropped_records_;
  process.incomplete_records = incomplete_;
  process.module_identity = facts.module_identity;
  std::string out = formats::kernel_trace_line(process);
  for (const Module& m : modules_) {
    formats::TraceModule line;
    line.id = m.id;
    line.image = m.elf ? "elf" : "other";
    line.bytes = m.bytes;
    line.xxh128 = hash_hex(m.xxh128);
    line.kernels = m.kernels;
    out += formats::kernel_trace_line(line);
  }
  for (const auto& [name, configs] : groups_) {
    // Tie the name to its code: one module holding it, or several with the
    // same bytes for it (the hash is still known, the module is not).
    formats::KernelRecord r;
    r.kernel = name;
    if (auto seen = code_by_name_.find(name); seen != code_by_name_.end()) {
      const auto& all = seen->second;
      bool same = std::all_of(all.begin(), all.end(), [&](const CodeSeen& c) { return c.code == all.front().code; });
      if (same) r.code_xxh128 = hash_hex(all.front().code);
      if (all.size() == 1) r.module = all.front().module;
    }
    r.demangled = demangle(name);
    for (const auto& [config, g] : configs) {
      r.config.device = config.device;
      for (std::size_t i = 0; i < 3; ++i)
        r.config.grid[i] = std::uint32_t(config.grid[i]), r.config.block[i] = std::uint32_t(config.block[i]);
      r.config.dynamic_smem = std::uint64_t(std::uint32_t(config.dynamic_smem));
      r.static_smem = std::uint64_t(std::uint32_t(g.static_smem));
      r.registers = g.registers;
      r.local_bytes = g.local_bytes;
      r.launches = g.launches;
      r.total_ns = g.total_ns;
      r.min_ns = g.min_ns;
      r.max_ns = g.max_ns;
      r.first_start_ns = g.first_start_ns;
      r.last_end_ns = g.last_end_ns;
      r.durations_ns = g.durations_ns;
      out += formats::kernel_trace_line(r);
    }
  }
  return out;
}

} // namespace ciq::inject
