#include "tuner/run/captures.h"

#include "cache/ptxas_command.h"
#include "cache/ptxas_identity.h"
#include "tuner/measure/command.h"
#include "tuner/formats/compare_mode.h"
#include "tuner/formats/capture_lines.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/safe_open.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

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

// The modules of the traced builds in `build_dirs`, with the trace
// directory of each (their PTX copies are there).
struct TracedModules {
  std::vector<TracedModule> modules;
  std::vector<std::string> dirs;
};

Result<TracedModules> read_traced(const std::vector<std::string>& build_dirs) {
  TracedModules traced;
  for (const auto& dir : build_dirs) {
    if (dir.empty() || !is_directory(dir)) continue;
    auto read = read_trace(dir);
    if (!read) return read.error();
    for (auto& m : *read) {
      traced.modules.push_back(std::move(m));
      traced.dirs.push_back(dir);
    }
  }
  return traced;
}

// The module of the traced build that capture `c` replays from, its
// directory in `dir`: the one module that holds the kernel (compiled for a
// GPU the capture's runs, its PTX kept); when several do (Triton's forward
// and backward graphs may each have a triton_poi_fused_mm_0), the one
// whose code for it is the code the launch ran. nullptr, with `why`, when
// none is, or which one is unknown.
const TracedModule* module_of(const formats::Capture& c, const TracedModules& traced, std::string& dir, std::string& why) {
  std::set<std::string> keys, same_code_keys;
  const TracedModule* found = nullptr;
  const TracedModule* found_by_code = nullptr;
  std::string found_by_code_dir;
  for (std::size_t i = 0; i < traced.modules.size(); ++i) {
    const TracedModule& m = traced.modules[i];
    if (m.exit_status != 0 || m.output.empty() || m.ptx_copy.empty() || !target_runs_on(m.target, c.compute_capability))
      continue;
    auto k = std::find_if(m.kernels.begin(), m.kernels.end(), [&](const TracedKernel& t) { return t.name == c.kernel; });
    if (k == m.kernels.end()) continue;
    if (keys.insert(m.module_key).second && !found) {
      found = &m;
      dir = traced.dirs[i];
    }
    if (!c.code_xxh128.empty() && k->code == c.code_xxh128 && same_code_keys.insert(m.module_key).second && !found_by_code) {
      found_by_code = &m;
      found_by_code_dir = traced.dirs[i];
    }
  }
  std::string name = printable(c.kernel);
  if (!found) {
    why = name + ": no module of the traced build holds it with its PTX kept (a library's kernel, one "
                 "built without ciq-nvcc/ciq-ptxas, or code for another GPU): it cannot be replayed";
    return nullptr;
  }
  if (keys.size() == 1) return found;
  if (same_code_keys.size() != 1) {
    why = name + ": " + std::to_string(keys.size()) + " different modules of the build hold it; which one " +
          "the program ran is unknown (" +
          (c.code_xxh128.empty() ? std::string("the capture does not name the code it ran")
                                 : std::to_string(same_code_keys.size()) + " of them with the code it ran") +
          ")";
    return nullptr;
  }
  dir = found_by_code_dir;
  return found_by_code;
}

// Makes capture `c` ready for replay from module `m` (traced in `dir`): its
// PTX as <capture>/module.ptx and how it was compiled, compile.json.
Result<void> attach_module(const formats::Capture& c, const TracedModule& m, const std::string& dir) {
  auto text = read_file(join_path(dir, m.ptx_copy));
  if (!text) return text.error();
  if (auto w = write_file_atomic(join_path(c.dir, "module.ptx"), *text); !w) return w.error();
  formats::CaptureCompile compile;
  compile.ptx = "module.ptx";
  compile.ptxas = m.ptxas_path;
  compile.ptxas_version = m.ptxas_version;
  compile.ptxas_release = release_of(m.ptxas_version);
  compile.ptxas_identity = m.ptxas_identity;
  compile.target = m.target;
  compile.args = m.args;
  compile.module_key = m.module_key;
  return formats::write_capture_compile(c.dir, compile);
}

} // namespace

Result<CaptureOutcome> attach_compiles(const std::string& captures_dir, const std::vector<std::string>& build_dirs) {
  CaptureOutcome out;
  if (!is_directory(captures_dir)) return out;
  auto set = formats::read_capture_set(captures_dir);
  if (!set) return set.error();
  for (const auto& problem : set->problems) out.refused.push_back(problem);
  out.processes = set->indexes.size();
  for (const auto& index : set->indexes) {
    if (!index.status.empty() && index.status != formats::k_status_ok)
      out.refused.push_back("process " + std::to_string(index.pid) + " captured nothing: " + index.status +
                            (index.reason.empty() ? "" : " (" + index.reason + ")"));
    for (const auto& e : index.entries)
      if (!e.refused.empty()) out.refused.push_back(e.kernel + ": " + e.refused);
  }
  auto traced = read_traced(build_dirs);
  if (!traced) return traced.error();
  for (const auto& c : set->captures) {
    std::string dir, why;
    const TracedModule* m = module_of(c, *traced, dir, why);
    if (!m) {
      out.refused.push_back(why);
      continue;
    }
    if (auto attached = attach_module(c, *m, dir); !attached) return attached.error();
    out.ready.push_back(c.dir);
  }
  return out;
}

void say_captures(const CaptureOutcome& outcome, const std::string& asked, bool campaign) {
  for (const auto& dir : outcome.ready) {
    auto c = formats::read_capture(dir);
    if (!c) continue;
    std::fprintf(stderr, "ciq-tuner: captured %s (grid %u,%u,%u block %u,%u,%u, %.1f MiB) in %s\n", printable(c->kernel).c_str(),
                 c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], double(c->bytes()) / (1 << 20),
                 printable(dir).c_str());
  }
  for (const auto& why : outcome.refused) std::fprintf(stderr, "ciq-tuner: not captured: %s\n", printable(why).c_str());
  if (outcome.ready.empty())
    std::fprintf(stderr, "ciq-tuner: warning: no launch of %s was captured for replay%s%s\n", printable(asked).c_str(),
                 outcome.processes ? "" : " (no process of the program wrote a capture index: its CUDA never loaded libciq-inject)",
                 campaign ? ": tuned by program runs" : "");
}

namespace {

// Why `--capture DIR` with --kernels `kernels` gives nothing to tune: no
// launch matches (the kernels captured named), and each launch that
// cannot be read, with its reason.
std::string no_launch_matches(const std::string& dir, const std::string& kernels, const formats::CaptureSet& set) {
  std::string why = "--capture " + dir + ": no captured launch";
  if (!kernels.empty()) {
    why += " of a kernel matching --kernels " + printable(kernels);
    std::set<std::string> all;
    for (const auto& c : set.captures) all.insert(printable(c.kernel));
    std::string listed;
    for (const auto& k : all) listed += (listed.empty() ? "" : ", ") + k;
    if (!all.empty()) why += " (captured: " + listed + ")";
  } else {
    why += " (a directory of `ciq-tuner profile --capture`, or one launch's directory in it)";
  }
  // Launches that are there but cannot be read say why.
  for (const auto& problem : set.problems) why += "\n  " + printable(problem);
  return why;
}

} // namespace

Result<std::vector<formats::Capture>> captures_for_run(const std::string& dir, const std::string& kernels) {
  std::vector<formats::Capture> chosen;
  if (path_exists(join_path(dir, formats::k_launch_file))) {
    auto c = formats::read_capture(dir);
    if (!c) return c.error();
    chosen.push_back(std::move(*c));
  } else {
    auto set = formats::read_capture_set(dir);
    if (!set) return set.error();
    std::set<std::string> names;
    for (auto& c : set->captures)
      if (kernels.empty() || glob_match(kernels, c.kernel)) names.insert(c.kernel);
    if (names.empty()) {
      return make_error("invalid", no_launch_matches(dir, kernels, *set));
    }
    if (names.size() > 1)
      return make_error("invalid", "--capture " + dir + " holds launches of " + std::to_string(names.size()) + " kernels" +
                                       (kernels.empty() ? "" : " matching --kernels " + printable(kernels)) +
                                       ": name one with --kernels (e.g. --kernels '" + printable(*names.begin()) + "')");
    for (auto& c : set->captures)
      if (c.kernel == *names.begin()) chosen.push_back(std::move(c));
  }
  std::map<std::string, std::uint64_t> launches;  // per module key
  for (const auto& c : chosen) {
    if (!c.has_compile)
      return make_error("invalid", printable(c.dir) + " has no compile.json: the capture is not tied to a module of a traced build "
                                           "(capture with `ciq-tuner profile --build CMD --capture KERNEL`)");
    launches[c.compile.module_key] += std::max<std::uint64_t>(c.config_launches, 1);
  }
  if (launches.size() > 1) {
    // Kernels of one name in several modules are different kernels (Inductor
    // names each graph's kernels from _0, so a forward and a backward graph
    // can each hold a triton_red_fused_..._0, with different code): one
    // search tunes one module's code, the one the program launched most.
    auto most = std::max_element(launches.begin(), launches.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    std::uint64_t all = 0;
    for (const auto& [key, n] : launches) all += n;
    std::fprintf(stderr,
                 "ciq-tuner: note: the captured launches of %s ran the code of %zu different modules (kernels of one name "
                 "in several modules are different kernels): tuning the one of module %s (%llu of %llu launches); the "
                 "others keep their code\n",
                 printable(chosen.front().kernel).c_str(), launches.size(), printable(most->first.substr(0, 12)).c_str(),
                 static_cast<unsigned long long>(most->second), static_cast<unsigned long long>(all));
    std::string key = most->first;
    chosen.erase(std::remove_if(chosen.begin(), chosen.end(), [&](const formats::Capture& c) { return c.compile.module_key != key; }),
                 chosen.end());
  }
  return chosen;
}

ReplaySteps replay_steps(const std::vector<formats::Capture>& captures, const std::string& ptxas_path,
                         const std::string& reference_cubin, const std::string& compare, const std::string& tool_dir) {
  const formats::CaptureCompile& k = captures.front().compile;
  ReplaySteps s;
  s.kernel = captures.front().kernel;
  std::vector<std::string> ptxas{ptxas_path};
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

/// A capture the tuner will act on: ptxas compiles its module.ptx, and
/// reference.cubin is written beside it. Only the user's own directory,
/// closed to others, is trusted for that (nobody else may swap the PTX
/// between this check and ptxas' open, or plant a link where the reference
/// is written); the PTX must be a regular file of the capture's, not a
/// link (opened once, checked on the descriptor). The ptxas compile.json
/// names is never run (check_same_ptxas compares it).
Result<void> check_trusted(const formats::Capture& c) {
  if (auto own = check_own_directory(c.dir); !own)
    return make_error(ciq::errc::unsafe, "not using the capture " + printable(c.dir) + ": " + own.error().message +
                                    " (the tuner compiles its module.ptx and writes reference.cubin there; copy the "
                                    "capture into a directory of your own)");
  // The capture's path goes into the tuner's build and server commands,
  // where {workdir}, {gpu} and {controls} are filled in: a folder named
  // 'x{gpu}' would make them read another, unchecked path.
  if (c.dir.find_first_of("{}") != std::string::npos || c.compile.ptx.find_first_of("{}") != std::string::npos)
    return make_error("invalid", "not using the capture " + printable(c.dir) + ": its path holds '{' or '}', which the "
                                 "tuner's commands read as placeholders; copy or rename it to a path without them");
  if (dir_name(c.compile.ptx) != c.dir)
    return make_error("invalid", printable(c.dir) + "/compile.json: \"ptx\" must name a file in the capture's directory, not '" +
                                     printable(c.compile.ptx) + "'");
  auto ptx = open_input(c.compile.ptx);
  if (!ptx) return make_error("invalid", printable(c.dir) + "/compile.json: the module's PTX: " + ptx.error().message);
  // The reference and every candidate compile this file by its path: in
  // a folder of yours, it must be yours too, and nobody else's to rewrite
  // meanwhile (cp -a by root keeps a teammate's ownership).
  struct stat st = ptx->st;
  ::close(ptx->fd);
  if (st.st_uid != ::geteuid() || st.st_nlink != 1 || !writable_by_others(st.st_mode).empty())
    return make_error(ciq::errc::unsafe, "not using the capture " + printable(c.dir) + ": its module's PTX " + printable(c.compile.ptx) +
                                    (st.st_uid != ::geteuid() ? " belongs to another user"
                                     : st.st_nlink != 1       ? " has other hard links"
                                                              : " is " + writable_by_others(st.st_mode)) +
                                    " (copy the capture into a directory of your own, as yourself)");
  return {};
}

/// Whether `mine`, the ptxas of the user's configuration, is the one that
/// compiled the capture's module (compile.json records its identity): a
/// different ptxas makes different cache keys, so what the tuner found
/// would be filed where the program's build never looks it up. A
/// compile.json of an older ciq records none: then `mine` is used, and
/// `noted` says so once.
Result<void> check_same_ptxas(const formats::Capture& c, const cache::UserPtxas& mine, bool& noted) {
  const formats::CaptureCompile& k = c.compile;
  std::string my_identity = cache::identity_digest(mine.identity);
  std::string yours = "ptxas " + mine.identity.version + " (identity " + my_identity + "; " + printable(mine.path) +
                      ", from " + mine.from + ")";
  if (k.ptxas_identity.empty()) {
    if (!noted)
      std::fprintf(stderr,
                   "ciq-tuner: note: %s/compile.json does not record which ptxas compiled the module (written by an "
                   "older ciq): compiling it with the ptxas of your configuration, %s, not the '%s' it names\n",
                   printable(c.dir).c_str(), yours.c_str(), printable(k.ptxas).c_str());
    noted = true;
    return {};
  }
  if (k.ptxas_identity == my_identity) return {};
  return make_error("invalid", printable(c.dir) + "/compile.json: the captured module was compiled by ptxas " +
                                   printable(k.ptxas_version.empty() ? "(version not recorded)" : k.ptxas_version) +
                                   " (identity " + k.ptxas_identity + "; '" + printable(k.ptxas) +
                                   "' where it was captured), but the ptxas of your configuration is " + yours +
                                   ": ptxas' identity is part of every cache key, so what the tuner found with yours "
                                   "would be filed under keys the program's build never looks up. Set CIQ_REAL_PTXAS "
                                   "to the ptxas the program's build runs, or capture again with this one");
}

/// Compiles the reference (`argv` ends in `-o reference`) into a private
/// directory beside it, then renames it into place: a link planted at the
/// reference's path is replaced, never written through.
Result<void> compile_reference(std::vector<std::string> argv, const std::string& reference) {
  auto scratch = ScratchDir::create(".reference-", dir_name(reference));
  if (!scratch) return scratch.error();
  std::string fresh = join_path(scratch->path(), "reference.cubin");
  argv.back() = fresh;
  RunOptions compile;
  compile.argv = argv;
  compile.capture_stdout = true;
  compile.capture_stderr = true;
  compile.stdin_null = true;
  auto ran = run_process(compile);
  if (!ran) return ran.error();
  if (!ran->succeeded())
    return make_error("build", "the captured kernel's module does not compile without controls (" + ran->describe() +
                                   "): " + printable_lines(ran->err));
  if (::rename(fresh.c_str(), reference.c_str()) != 0)
    return make_error("io", "cannot write " + reference + ": " + std::strerror(errno));
  return {};
}

} // namespace

Result<void> use_capture(GivenOptions& given, const std::string& dir, const std::string& compare) {
  if (!given.build.empty() || !given.bench.empty() || !given.check.empty() || !given.bench_server.empty())
    return make_error(ciq::errc::usage, "--capture replaces --build, --bench, --check and --bench-server (the build is one ptxas "
                               "compile of the captured kernel's module, the benchmark its replay): give none of them");
  if (!compare.empty())  // read as ciq-replay reads it, before anything is built
    if (auto mode = formats::parse_compare_mode(compare); !mode) return mode.error();
  auto captures = captures_for_run(dir, given.kernels);
  if (!captures) return captures.error();
  for (auto& c : *captures) {
    if (auto trusted = check_trusted(c); !trusted) return trusted.error();
    // Its ptxas arguments are another user's text: only what they mean for
    // code generation is passed on, never a file to read or write.
    auto args = cache::capture_ptxas_args(c.compile.args);
    if (!args) return make_error("invalid", printable(c.dir) + "/compile.json: " + args.error().message);
    c.compile.args = std::move(*args);
  }
  // The ptxas that runs is the user's own (as ciq-ptxas finds it), never
  // the one a capture names: that one is only compared.
  std::string tool_dir = dir_name(self_executable());
  auto ptxas = cache::find_user_ptxas(real_path(join_path(tool_dir, "ciq-ptxas")).value_or(""), cache_directory());
  if (!ptxas) return make_error(ptxas.error().code, "--capture: no ptxas to compile the captured module with: " + ptxas.error().message);
  bool noted = false;
  for (const auto& c : *captures)
    if (auto same = check_same_ptxas(c, *ptxas, noted); !same) return same.error();
  const formats::Capture& first = captures->front();
  std::string reference = join_path(first.dir, "reference.cubin");
  if (tool_dir.find_first_of("{}") != std::string::npos || ptxas->path.find_first_of("{}") != std::string::npos)
    return make_error("invalid", "--capture: the path of ciq-ptxas or of your ptxas holds '{' or '}', which the tuner's "
                                 "commands read as placeholders: install them where the path has none");
  ReplaySteps steps = replay_steps(*captures, ptxas->path, reference, compare, tool_dir);
  // Always compiled afresh by your ptxas: a reference.cubin that came with a
  // copied capture (cp -a keeps its time) is the copier's, not a reference.
  if (auto compiled = compile_reference(steps.reference, reference); !compiled) return compiled.error();
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
