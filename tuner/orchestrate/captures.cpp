#include "tuner/orchestrate/captures.h"

#include "tuner/measure/command.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sys/stat.h>

namespace ciq::tuner {

namespace {

/// The target a GPU of compute capability `cc` runs: sm_90 code, or the
/// architecture-specific sm_90a.
bool target_runs_on(const std::string& target, const std::array<int, 2>& cc) {
  std::string plain = "sm_" + std::to_string(cc[0]) + std::to_string(cc[1]);
  return target == plain || target == plain + "a" || target == plain + "f";
}

std::string words(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& w : argv) line += (line.empty() ? "" : " ") + shell_quoted(w);
  return line;
}

} // namespace

Result<CaptureOutcome> attach_compiles(const std::string& captures_dir, const std::vector<std::string>& build_dirs) {
  CaptureOutcome out;
  if (!is_directory(captures_dir)) return out;
  auto set = profile::read_capture_set(captures_dir);
  if (!set) return set.error();
  for (const auto& problem : set->problems) out.refused.push_back(problem);
  out.processes = set->indexes.size();
  for (const auto& index : set->indexes) {
    if (!index.status.empty() && index.status != "ok")
      out.refused.push_back("process " + std::to_string(index.pid) + " captured nothing: " + index.status +
                            (index.reason.empty() ? "" : " (" + index.reason + ")"));
    for (const auto& e : index.entries)
      if (!e.refused.empty()) out.refused.push_back(e.kernel + ": " + e.refused);
  }
  std::vector<TracedModule> modules;
  std::vector<std::string> module_dirs;  // the trace directory of each
  for (const auto& dir : build_dirs) {
    if (dir.empty() || !is_directory(dir)) continue;
    auto read = read_trace(dir);
    if (!read) return read.error();
    for (auto& m : *read) {
      modules.push_back(std::move(m));
      module_dirs.push_back(dir);
    }
  }
  for (const auto& c : set->captures) {
    std::set<std::string> keys;
    const TracedModule* found = nullptr;
    std::string found_dir;
    for (std::size_t i = 0; i < modules.size(); ++i) {
      const TracedModule& m = modules[i];
      if (m.exit_status != 0 || m.output.empty() || m.ptx_copy.empty() || !target_runs_on(m.target, c.compute_capability))
        continue;
      bool holds = std::any_of(m.kernels.begin(), m.kernels.end(), [&](const TracedKernel& k) { return k.name == c.kernel; });
      if (!holds) continue;
      if (keys.insert(m.module_key).second && !found) {
        found = &m;
        found_dir = module_dirs[i];
      }
    }
    std::string name = printable(c.kernel);
    if (!found) {
      out.refused.push_back(name + ": no module of the traced build holds it with its PTX kept (a library's kernel, or one "
                                   "built without ciq-nvcc/ciq-ptxas): it is tuned by whole-program runs");
      continue;
    }
    if (keys.size() > 1) {
      out.refused.push_back(name + ": " + std::to_string(keys.size()) +
                            " different modules of the build hold it; which one the program ran is unknown");
      continue;
    }
    std::string ptx = join_path(c.dir, "module.ptx");
    auto text = read_file(join_path(found_dir, found->ptx_copy));
    if (!text) return text.error();
    if (auto w = write_file_atomic(ptx, *text); !w) return w.error();
    profile::CaptureCompile compile{"module.ptx", found->ptxas_path, found->target, found->args, found->module_key};
    if (auto w = profile::write_capture_compile(c.dir, compile); !w) return w.error();
    out.ready.push_back(c.dir);
  }
  return out;
}

void say_captures(const CaptureOutcome& outcome, const std::string& asked) {
  for (const auto& dir : outcome.ready) {
    auto c = profile::read_capture(dir);
    if (!c) continue;
    std::fprintf(stderr, "ciq-tuner: captured %s (grid %u,%u,%u block %u,%u,%u, %.1f MiB) in %s\n", printable(c->kernel).c_str(),
                 c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], double(c->bytes()) / (1 << 20),
                 printable(dir).c_str());
  }
  for (const auto& why : outcome.refused) std::fprintf(stderr, "ciq-tuner: not captured: %s\n", printable(why).c_str());
  if (outcome.ready.empty())
    std::fprintf(stderr, "ciq-tuner: warning: no launch of %s was captured for replay%s: tuned by program runs\n",
                 printable(asked).c_str(),
                 outcome.processes ? "" : " (no process of the program wrote a capture index: its CUDA never loaded libciq-inject)");
}

Result<std::vector<profile::Capture>> captures_for_run(const std::string& dir, const std::string& kernels) {
  std::vector<profile::Capture> chosen;
  if (path_exists(join_path(dir, "launch.json"))) {
    auto c = profile::read_capture(dir);
    if (!c) return c.error();
    chosen.push_back(std::move(*c));
  } else {
    auto set = profile::read_capture_set(dir);
    if (!set) return set.error();
    std::set<std::string> names;
    for (auto& c : set->captures)
      if (kernels.empty() || glob_match(kernels, c.kernel)) names.insert(c.kernel);
    if (names.empty())
      return make_error("invalid", "--capture " + dir + ": no captured launch" +
                                       (kernels.empty() ? "" : " of a kernel matching --kernels " + kernels) +
                                       " (a directory of `ciq-tuner profile --capture`, or one launch's directory in it)");
    if (names.size() > 1)
      return make_error("invalid", "--capture " + dir + " holds launches of " + std::to_string(names.size()) +
                                       " kernels: name one with --kernels (e.g. --kernels '" + printable(*names.begin()) + "')");
    for (auto& c : set->captures)
      if (c.kernel == *names.begin()) chosen.push_back(std::move(c));
  }
  for (const auto& c : chosen) {
    if (!c.has_compile)
      return make_error("invalid", c.dir + " has no compile.json: the capture is not tied to a module of a traced build "
                                           "(capture with `ciq-tuner profile --build CMD --capture KERNEL`)");
    if (c.compile.module_key != chosen.front().compile.module_key)
      return make_error("invalid", "the captured launches of " + printable(c.kernel) + " come from different modules");
  }
  return chosen;
}

ReplaySteps replay_steps(const std::vector<profile::Capture>& captures, const std::string& reference_cubin,
                         const std::string& compare, const std::string& tool_dir) {
  const profile::CaptureCompile& k = captures.front().compile;
  ReplaySteps s;
  s.kernel = captures.front().kernel;
  std::vector<std::string> ptxas{k.ptxas};
  ptxas.insert(ptxas.end(), k.args.begin(), k.args.end());
  ptxas.push_back(k.ptx);
  std::vector<std::string> build{join_path(tool_dir, "ciq-ptxas")};
  build.insert(build.end(), ptxas.begin(), ptxas.end());
  s.build = words(build) + " -o {workdir}/module.cubin";
  s.reference = ptxas;
  s.reference.push_back("-o");
  s.reference.push_back(reference_cubin);
  std::string replay = env(Env::replay);
  std::vector<std::string> server{replay.empty() ? join_path(tool_dir, "ciq-replay") : replay, "serve", "--reference", reference_cubin};
  if (!compare.empty()) server.insert(server.end(), {"--compare", compare});
  for (const auto& c : captures) server.push_back(c.dir);
  s.bench_server = words(server);
  s.bench = "--cubin {workdir}/module.cubin";
  s.check = "--cubin {workdir}/module.cubin --check";
  s.metric = "time_ms: ([0-9.eE+-]+)";
  return s;
}

namespace {

std::int64_t mtime_ns(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

} // namespace

Result<void> use_capture(GivenOptions& given, const std::string& dir, const std::string& compare) {
  if (!given.build.empty() || !given.bench.empty() || !given.check.empty() || !given.bench_server.empty())
    return make_error("usage", "--capture replaces --build, --bench, --check and --bench-server (the build is one ptxas "
                               "compile of the captured kernel's module, the benchmark its replay): give none of them");
  auto captures = captures_for_run(dir, given.kernels);
  if (!captures) return captures.error();
  const profile::Capture& first = captures->front();
  std::string reference = join_path(first.dir, "reference.cubin");
  std::string tool_dir = dir_name(self_executable());
  ReplaySteps steps = replay_steps(*captures, reference, compare, tool_dir);
  if (mtime_ns(reference) < mtime_ns(first.compile.ptx)) {
    RunOptions compile;
    compile.argv = steps.reference;
    compile.capture_stdout = true;
    compile.capture_stderr = true;
    compile.stdin_null = true;
    auto ran = run_process(compile);
    if (!ran) return ran.error();
    if (!ran->succeeded())
      return make_error("build", "the captured kernel's module does not compile without controls (" + ran->describe() +
                                     "): " + printable_lines(ran->err));
  }
  given.build = steps.build;
  given.bench_server = steps.bench_server;
  given.bench = steps.bench;
  given.check = steps.check;
  given.shell = false;
  if (given.metrics.empty() && given.objectives.empty()) given.metrics.push_back(steps.metric);
  if (given.kernels.empty()) given.kernels = steps.kernel;
  return {};
}

} // namespace ciq::tuner
