#include "tuner/run/profiling.h"

#include "tuner/measure/command.h"
#include "tuner/measure/gpu_driver.h"
#include "tuner/run/captures.h"
#include "utils/json.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unistd.h>

namespace ciq::tuner {

namespace {

Result<std::string> new_out_dir(const std::string& given) {
  if (!given.empty()) {
    if (auto made = make_own_directory(given); !made) return made.error();
    return given;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = join_path(tmp && *tmp ? tmp : "/tmp", "ciq-profile.XXXXXX");
  if (!::mkdtemp(pattern.data())) return make_error("io", "cannot create a directory for the traces under " + dir_name(pattern));
  return pattern;
}

// Where a profile's traces go under `out`: kernels/, build-trace/ and,
// when kernels are to be captured, captures/; each emptied first (an
// earlier profile into the same --out would be read with this one: twice
// the time, twice the processes).
Result<ProfileCapture> profile_dirs(const std::string& out, bool capturing) {
  ProfileCapture c;
  c.dir = out;
  c.kernel_dir = join_path(out, "kernels");
  c.build_dir = join_path(out, "build-trace");
  if (capturing) c.captures_dir = join_path(out, "captures");
  for (const auto& d : {c.kernel_dir, c.build_dir, c.captures_dir}) {
    if (d.empty()) continue;
    remove_tree(d);
    if (auto made = make_dirs(d); !made) return made.error();
  }
  return c;
}

// With `quiet`, where the build's and the program's output go: the
// profile's log, stdout captured and added after, stderr into it as it
// comes. Without, they are the user's to see.
struct ProfileLog {
  std::string path;
  bool quiet = false;
  void route(RunOptions& r) const {
    if (!quiet) return;
    r.capture_stdout = true;
    r.stderr_file = path;
    r.stdin_null = true;
  }
  void add(const RunResult& r) const {
    if (quiet && !r.out.empty()) (void)append_file(path, r.out);
  }
};

} // namespace

const formats::ConfigSummary* largest_config(const formats::KernelSummary& k) {
  return k.configs.empty() ? nullptr : &k.configs.front();
}

std::string inject_library(const std::string& given) {
  if (!given.empty()) return given;
  if (std::string set = env(Env::inject_library); !set.empty()) return set;
  return join_path(dir_name(dir_name(self_executable())), "lib/libciq-inject.so");
}

std::string inject_library_missing() {
  if (!env(Env::inject_library).empty()) return "CIQ_INJECT_LIBRARY names it; point it at a built libciq-inject.so, or unset it";
#ifndef CIQ_INJECT_CONFIGURED
  return "this ciq was configured without CUPTI's headers (cupti_activity.h and cuda.h, looked for in $CUDA_HOME/include "
         "and /usr/local/cuda/include), so it has no kernel-timing library: configure again with CUDA_HOME set to a "
         "CUDA Toolkit that has them, or set CIQ_INJECT_LIBRARY";
#else
  // Configured with CUPTI: the library exists as a target but was not built
  // (a build of named targets only) or not copied along with this binary.
  std::string prefix = dir_name(dir_name(self_executable()));
  if (path_exists(join_path(prefix, "CMakeCache.txt")))
    return "this build makes it but has not built it yet: cmake --build " + prefix + " --target ciq-inject";
  return "ciq-tuner looks for it in lib/ beside its bin/, and `cmake --install BUILD --prefix " + prefix +
         "` puts it there with the rest of ciq; or set CIQ_INJECT_LIBRARY";
#endif
}

std::vector<ProfileRow> profile_rows(const formats::KernelTrace& trace, const std::vector<TracedModule>& build) {
  std::map<std::string, std::vector<ProfileOrigin>> origins;
  for (const auto& m : build)
    for (const auto& k : m.kernels) {
      auto& list = origins[k.name];
      bool known = false;
      for (const auto& o : list) known |= o.key == m.module_key;
      if (!known) list.push_back({m.module_key, m.input, m.target});
    }
  std::vector<ProfileRow> rows;
  double cumulative = 0;
  for (const auto& k : trace.kernels) {
    cumulative += k.share;
    ProfileRow row;
    row.kernel = &k;
    row.cumulative = cumulative;
    if (auto it = origins.find(k.kernel); it != origins.end()) row.origins = it->second;
    rows.push_back(std::move(row));
  }
  return rows;
}

ProfileFile profile_of(const formats::KernelTrace& trace, const std::vector<ProfileRow>& rows) {
  ProfileFile profile;
  profile.total_ns = trace.total_ns;
  for (const auto& p : trace.processes) profile.processes.push_back({p.pid, p.exe, p.status, p.reason});
  for (const auto& row : rows) {
    const auto& k = *row.kernel;
    ProfileKernel out;
    out.kernel = k.kernel;
    out.demangled = k.demangled;
    out.share = k.share;
    out.cumulative = row.cumulative;
    out.launches = k.stats.launches;
    out.total_ns = k.stats.total_ns;
    out.median_ns = k.stats.median_ns;
    out.min_ns = k.stats.min_ns;
    out.max_ns = k.stats.max_ns;
    if (const auto* config = largest_config(k)) out.registers = config->registers;
    out.configs = k.configs.size();
    out.processes = k.processes;
    out.origins = row.origins;
    out.code_xxh128 = k.code_xxh128;
    profile.kernels.push_back(std::move(out));
  }
  return profile;
}

Result<ProfileCapture> capture_profile(const std::string& build_command, const std::vector<std::string>& argv, bool shell,
                                       const std::string& out_dir, const std::string& library_given,
                                       const std::map<std::string, std::string>& placeholders, bool quiet,
                                       const std::string& capture_kernels) {
  if (argv.empty())
    return make_error(ciq::errc::usage, "profile needs the program to run, after '--' (ciq-tuner profile [--build CMD] -- ./app args), or --trace DIR");
  std::string library = inject_library(library_given);
  if (!path_exists(library))
    return make_error(ciq::errc::not_found, "no kernel-timing library at " + library + ": " + inject_library_missing());
  auto out = new_out_dir(out_dir);
  if (!out) return out.error();
  auto made = profile_dirs(*out, !capture_kernels.empty());
  if (!made) return made.error();
  ProfileCapture c = std::move(*made);
  std::fprintf(stderr, "ciq-tuner: profiling into %s\n", out->c_str());
  ProfileLog log{join_path(*out, "profile.log"), quiet};
  if (!build_command.empty()) {
    auto build_argv = command_argv(build_command, placeholders, shell);
    if (!build_argv) return build_argv.error();
    RunOptions build;
    build.argv = *build_argv;
    build.set_env = {{env_name(Env::trace), c.build_dir}};
    // The PTX kept: a later capture of these kernels needs it to replay them.
    build.set_env.emplace_back(env_name(Env::trace_ptx), "1");
    log.route(build);
    auto ran = run_process(build); // its output is the user's to see
    if (!ran) return ran.error();
    log.add(*ran);
    if (!ran->succeeded())
      return make_error("build", "the build failed (" + ran->describe() + "): " + build_command + (quiet ? " (log: " + log.path + ")" : "") +
                                     (out_dir.empty() ? "; its trace is kept in " + *out : ""));
  }
  RunOptions program;
  program.argv = argv;
  // CIQ_TRACE for the program too: a JIT compiler inside it (Triton,
  // through ciq-ptxas) is its build, and names its kernels' keys there.
  program.set_env = {{"CUDA_INJECTION64_PATH", library}, {env_name(Env::kernel_trace), c.kernel_dir},
                     {env_name(Env::trace), c.build_dir}};
  if (!capture_kernels.empty()) {
    program.set_env.emplace_back(env_name(Env::trace_ptx), "1");
    program.set_env.emplace_back(env_name(Env::capture), c.captures_dir);
    program.set_env.emplace_back(env_name(Env::capture_kernels), capture_kernels);
  }
  log.route(program);
  auto ran = run_process(program);
  if (!ran) return ran.error();
  log.add(*ran);
  c.program_status = ran->shell_status();
  if (!ran->succeeded()) c.program_describe = ran->describe();
  return c;
}

Result<Profile> read_profile(const std::string& kernel_dir, const std::string& build_dir) {
  Profile p;
  auto trace = formats::read_kernel_trace(kernel_dir);
  if (!trace) return trace.error();
  for (const auto& problem : trace->problems)
    std::fprintf(stderr, "ciq-tuner: warning: %s: %s\n", printable(problem.where).c_str(), printable(problem.message).c_str());
  if (!trace->timed()) return make_error(ciq::errc::no_timing, "no kernel timing: " + printable(trace->no_timing_reason()));
  p.trace = std::move(*trace);
  if (!build_dir.empty()) {
    auto modules = read_trace(build_dir);
    if (!modules) return modules.error();
    p.build = std::move(*modules);
  }
  return p;
}

// Why no process here could have written a trace, when the machine has no
// NVIDIA driver ("" when it has one).
std::string no_driver_note() {
  if (nvidia_driver_loaded()) return "";
  return "; this machine has no NVIDIA driver loaded (no /proc/driver/nvidia), so no program can use a GPU here";
}

} // namespace ciq::tuner
