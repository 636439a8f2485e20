// `ciq-cache doctor` (doctor.h).
#include "cache/cli/doctor.h"

#include "cache/cli/build_objects.h"
#include "cache/store.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>

namespace ciq::cache::cli {

namespace {

struct Finding {
  bool problem = false;
  std::string what, fix;
};

/// The value of `name` in a CMakeCache.txt (`NAME:TYPE=value`); "" when absent.
std::string cmake_value(const std::string& cache_text, const std::string& name) {
  for (auto line : split(cache_text, '\n')) {
    if (line.size() <= name.size() || line.compare(0, name.size(), name) != 0 || line[name.size()] != ':') continue;
    auto eq = line.find('=');
    if (eq != std::string_view::npos) return std::string(line.substr(eq + 1));
  }
  return "";
}

bool names_ciq_nvcc(const std::string& path) { return base_name(path) == "ciq-nvcc"; }

/// Whether two paths name one directory (links resolved where they exist).
bool same_directory(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto ra = real_path(a), rb = real_path(b);
  return ra && rb && *ra == *rb;
}

/// A ccache setting as configured here: $ENV_NAME, else `ccache
/// --get-config KEY` (its files); "" when neither says.
std::string ccache_setting(const char* env_name, const char* key) {
  if (std::string value = env_or_empty(env_name); !value.empty()) return value;
  RunOptions run;
  run.argv = {"ccache", "--get-config", key};
  run.capture_stdout = run.capture_stderr = true;
  run.stdin_null = true;
  run.timeout_seconds = 10;
  auto ran = run_process(run);
  return ran && ran->succeeded() ? std::string(trim(ran->out)) : "";
}

/// ccache's depend_mode as configured here (environment, then its files).
bool ccache_depend_mode() {
  if (std::string value = env_or_empty("CCACHE_DEPEND"); !value.empty()) return value != "0" && value != "false";
  if (!env_or_empty("CCACHE_NODEPEND").empty()) return false;
  return ccache_setting("CCACHE_DEPEND", "depend_mode") == "true";
}

/// Whether ccache's compiler_check asks ciq-nvcc for its mode
/// (wrapper/compiler_check.h).
bool ccache_checks_ciq_mode() {
  return ccache_setting("CCACHE_COMPILERCHECK", "compiler_check").find("--ciq-compiler-check") != std::string::npos;
}

void check_compiler_cache(const std::string& launcher, std::vector<Finding>& findings) {
  std::string name = base_name(launcher);
  if (name.empty()) return;
  if (name == "ccache") {
    if (!ccache_depend_mode())
      findings.push_back({true, "ccache is the CUDA compiler launcher without depend mode: a rebuild can take an object compiled "
                                "with other controls than the cache applies now",
                          "set CCACHE_DEPEND=1 in the build's environment (or depend_mode = true in ccache.conf)"});
    else if (!ccache_checks_ciq_mode())
      findings.push_back({true, "ccache is the CUDA compiler launcher in depend mode, but its compiler_check does not ask "
                                "ciq-nvcc for its mode: an object compiled with CIQ_DISABLE=1, or by a user who cannot write "
                                "the cache, lists no stamps and is taken by every later build of its unit",
                          "set CCACHE_COMPILERCHECK='%compiler% --ciq-compiler-check' in the build's environment (or "
                          "compiler_check = %compiler% --ciq-compiler-check in ccache.conf)"});
    else
      findings.push_back({false, "ccache is the CUDA compiler launcher, in depend mode, asking ciq-nvcc for its mode: it hashes "
                                 "ciq's stamps with the headers", ""});
  } else if (name == "sccache") {
    findings.push_back({true, "sccache is the CUDA compiler launcher: it keys objects on the command line and the preprocessed "
                              "source only, never on dependency files, so it returns objects compiled with other controls",
                        "build CUDA units without it (drop CMAKE_CUDA_COMPILER_LAUNCHER), or use ccache with CCACHE_DEPEND=1 "
                        "and CCACHE_COMPILERCHECK='%compiler% --ciq-compiler-check'"});
  } else if (names_ciq_nvcc(launcher)) {
    findings.push_back({false, "ciq-nvcc is the CUDA compiler launcher", ""});
  }
}

} // namespace

Result<bool> diagnose_build(const std::string& cache_dir, const std::string& build_dir, bool json, std::ostream& out) {
  if (!is_directory(build_dir)) return make_error(ciq::errc::usage, build_dir + " is not a directory (give a build directory)");
  std::vector<Finding> findings;
  std::string generator;
  if (auto cmake = read_file(join_path(build_dir, "CMakeCache.txt"), 16 << 20)) {
    generator = cmake_value(*cmake, "CMAKE_GENERATOR");
    std::string compiler = cmake_value(*cmake, "CMAKE_CUDA_COMPILER");
    std::string launcher = cmake_value(*cmake, "CMAKE_CUDA_COMPILER_LAUNCHER");
    bool through_ciq = names_ciq_nvcc(compiler) || names_ciq_nvcc(launcher) ||
                       (launcher.find("ciq-nvcc") != std::string::npos);
    if (compiler.empty())
      findings.push_back({false, "CMake project without CUDA (no CMAKE_CUDA_COMPILER)", ""});
    else if (through_ciq)
      findings.push_back({false, "CUDA compiler: " + compiler + (launcher.empty() ? "" : " (launcher " + launcher + ")"), ""});
    else
      findings.push_back({true, "CUDA compiler: " + compiler + ", not ciq-nvcc: no tuned entry reaches this build",
                          "configure a new build directory with CUDACXX=ciq-nvcc (CMake keeps the compiler it found first)"});
    check_compiler_cache(launcher, findings);
  }
  // The wrappers' own view of the cache: one they cannot open (another
  // user's, a read-only one LMDB cannot lock) gives every build nvcc's own
  // code and no stamps, whatever the objects below say.
  if (auto opened = Store::open_for_reading(cache_dir); !opened)
    findings.push_back({true, "the wrappers cannot use the cache " + cache_dir + ": " + opened.error().message +
                                  "; builds get nvcc's own code and their objects name no stamps",
                        "use a cache directory you own and can write (CIQ_CACHE_DIR); share a team's results as a pack "
                        "(CIQ_PACKS) or a remote, not another user's cache (docs/sharing.md)"});
  auto objects = read_build_objects(build_dir);
  if (!objects) return objects.error();
  std::size_t stamped = 0, stale = 0, unstamped = 0;
  std::string foreign;
  std::string own_stamps = join_path(cache_dir, "stamps");
  for (const auto& o : objects->objects) {
    if (o.state == BuildObject::State::no_stamps) ++unstamped;
    else ++stamped;
    if (o.state == BuildObject::State::stale) ++stale;
    for (const auto& s : o.stamps)
      if (s.find("/stamps/") != std::string::npos && foreign.empty() && !same_directory(dir_name(s), own_stamps))
        foreign = dir_name(s);
  }
  if (objects->objects.empty())
    findings.push_back({false, "no CUDA object is recorded yet (" + objects->source + "): build once, then ask again", ""});
  if (unstamped)
    findings.push_back({true, std::to_string(unstamped) + " of " + std::to_string(objects->objects.size()) +
                                  (objects->objects.size() == 1 ? " CUDA object names" : " CUDA objects name") +
                                  " no ciq stamp: a change of the cache does not reach them",
                        "compile through ciq-nvcc with a dependency file (-MD; CMake passes it): build them once (a clean "
                        "build, or touch their sources)"});
  if (!foreign.empty())
    findings.push_back({true, "the build's stamps are in " + foreign + ", not in this cache (" + own_stamps + ")",
                        "give --cache-dir (or CIQ_CACHE_DIR) as the build has it"});
  if (stale)
    findings.push_back({false, std::to_string(stale) +
                                   (stale == 1 ? " CUDA object is stale (an entry it looked up changed after it was compiled); "
                                                 "the next build compiles it again"
                                               : " CUDA objects are stale (an entry each looked up changed after it was "
                                                 "compiled); the next build compiles them again"),
                        ""});
  bool problem = false;
  for (const auto& f : findings) problem = problem || f.problem;
  if (json) {
    nlohmann::json j = {{"build_dir", build_dir}, {"generator", generator}, {"source", objects->source},
                        {"objects", objects->objects.size()}, {"stamped", stamped}, {"stale", stale}, {"problem", problem}};
    j["findings"] = nlohmann::json::array();
    for (const auto& f : findings) j["findings"].push_back({{"problem", f.problem}, {"what", f.what}, {"fix", f.fix}});
    j["stale_objects"] = nlohmann::json::array();
    for (const auto& o : objects->objects)
      if (o.state == BuildObject::State::stale) j["stale_objects"].push_back({{"object", o.path}, {"why", o.why}});
    out << j.dump() << "\n";
    return problem;
  }
  out << "build directory: " << printable(build_dir) << (generator.empty() ? "" : " (" + printable(generator) + ")") << "\n";
  out << "objects: " << objects->objects.size() << (objects->objects.size() == 1 ? " CUDA object in " : " CUDA objects in ") << objects->source << ", " << stamped
      << " with ciq's stamps, " << stale << " stale\n";
  for (const auto& f : findings) {
    out << (f.problem ? "problem: " : "ok: ") << printable(f.what) << "\n";
    if (!f.fix.empty()) out << "  fix: " << printable(f.fix) << "\n";
  }
  for (const auto& o : objects->objects)
    if (o.state == BuildObject::State::stale) out << "stale: " << printable(o.path) << ": " << printable(o.why) << "\n";
  return problem;
}

} // namespace ciq::cache::cli
