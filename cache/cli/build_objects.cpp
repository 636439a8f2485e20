// Reading a build directory's record of its objects' dependencies
// (build_objects.h). ninja keeps the dependency files it read in its own
// log and deletes them, so the log is asked through `ninja -t deps` (run as
// argv, never a shell); make leaves the .d files where nvcc wrote them.
#include "cache/cli/build_objects.h"

#include "cache/stamps.h"

#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <sys/stat.h>

namespace ciq::cache::cli {

namespace {

constexpr std::size_t k_max_dep_files = 20000;
constexpr int k_max_depth = 12;
constexpr std::uint64_t k_dep_file_bytes = 16 << 20;

bool is_ciq_stamp(const std::string& path) {
  return path.find("/stamps/") != std::string::npos || ends_with(path, ".ciqpack");
}

/// Modification time in nanoseconds; -1 when absent.
std::int64_t mtime_ns(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

/// Judges one object from its dependencies and the time it was made.
BuildObject judge(std::string path, const std::vector<std::string>& deps, std::int64_t made_ns) {
  BuildObject o;
  o.path = std::move(path);
  bool cuda = false;
  for (const auto& d : deps) {
    if (ends_with(d, ".cu")) cuda = true;
    if (is_ciq_stamp(d)) o.stamps.push_back(d);
  }
  if (!cuda) o.path.clear();  // not a CUDA object: the caller drops it
  if (o.stamps.empty()) return o;
  o.state = BuildObject::State::current;
  for (const auto& s : o.stamps) {
    std::int64_t t = mtime_ns(s);
    if (base_name(s) == cache::k_tuning_build_stamp) o.why = "compiled by a tuning build, with a candidate's controls";
    else if (t < 0) o.why = "its stamp " + s + " is gone (the cache was cleared or moved)";
    else if (made_ns >= 0 && t > made_ns) o.why = "an entry it looked up changed after it was compiled (" + base_name(s) + ")";
    else continue;
    o.state = BuildObject::State::stale;
    break;
  }
  return o;
}

Result<BuildObjects> from_ninja(const std::string& build_dir) {
  RunOptions run;
  run.argv = {"ninja", "-C", build_dir, "-t", "deps"};
  run.capture_stdout = run.capture_stderr = true;
  run.stdin_null = true;
  run.timeout_seconds = 60;
  auto ran = run_process(run);
  if (!ran) return make_error("io", "cannot run ninja to read " + build_dir + "'s dependency log: " + ran.error().message);
  if (!ran->succeeded()) return make_error("io", "ninja -t deps failed in " + build_dir + " (" + ran->describe() + "): " + printable_lines(ran->err));
  BuildObjects out{"ninja's dependency log", {}};
  std::string target;
  std::int64_t made = -1;
  std::vector<std::string> deps;
  auto flush = [&] {
    if (target.empty()) return;
    std::string path = target[0] == '/' ? target : join_path(build_dir, target);
    BuildObject o = judge(target, deps, made >= 0 ? made : mtime_ns(path));
    if (!o.path.empty()) out.objects.push_back(std::move(o));
    target.clear();
    deps.clear();
  };
  for (auto line : split(ran->out, '\n')) {
    if (line.empty()) continue;
    if (line[0] == ' ') {
      deps.emplace_back(trim(line));
      continue;
    }
    flush();
    // "CMakeFiles/k.dir/a.cu.o: #deps 190, deps mtime 1796619565755793191 (VALID)"
    auto colon = line.find(": #deps");
    if (colon == std::string_view::npos) continue;
    target = std::string(line.substr(0, colon));
    made = -1;
    if (auto at = line.find("deps mtime "); at != std::string_view::npos)
      made = std::strtoll(std::string(line.substr(at + 11)).c_str(), nullptr, 10);
    if (line.find("(STALE)") != std::string_view::npos) made = 0;  // ninja itself will rebuild it
  }
  flush();
  return out;
}

/// The first rule of a dependency file: its target and prerequisites.
void read_rule(const std::string& text, std::string& target, std::vector<std::string>& deps) {
  std::string joined;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      joined += ' ';
      continue;
    }
    if (text[i] == '\n') break;
    joined += text[i];
  }
  std::size_t colon = std::string::npos;
  for (std::size_t i = 0; i < joined.size(); ++i)
    if (joined[i] == ':' && (i + 1 == joined.size() || joined[i + 1] == ' ')) {
      colon = i;
      break;
    }
  if (colon == std::string::npos) return;
  target = std::string(trim(std::string_view(joined).substr(0, colon)));
  std::string word;
  for (std::size_t i = colon + 1; i <= joined.size(); ++i) {
    char c = i < joined.size() ? joined[i] : ' ';
    if (c == '\\' && i + 1 < joined.size()) {
      word += joined[++i];
    } else if (c == ' ' || c == '\t') {
      if (!word.empty()) deps.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
}

void walk(const std::string& dir, int depth, std::vector<std::string>& found) {
  if (depth > k_max_depth || found.size() >= k_max_dep_files) return;
  auto names = list_directory(dir);
  if (!names) return;
  for (const auto& name : *names) {
    std::string path = join_path(dir, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) walk(path, depth + 1, found);
    else if (S_ISREG(st.st_mode) && ends_with(name, ".d") && found.size() < k_max_dep_files) found.push_back(path);
  }
}

Result<BuildObjects> from_dep_files(const std::string& build_dir) {
  if (!is_directory(build_dir)) return make_error("io", build_dir + " is not a directory");
  std::vector<std::string> files;
  walk(build_dir, 0, files);
  BuildObjects out{std::to_string(files.size()) + " dependency files", {}};
  for (const auto& file : files) {
    auto text = read_file(file, k_dep_file_bytes);
    if (!text) continue;
    std::string target;
    std::vector<std::string> deps;
    read_rule(*text, target, deps);
    if (target.empty()) continue;
    // make runs the compile where its Makefile is: a relative target is
    // next to the .d file, or (CMake) relative to the build directory.
    std::string object = target;
    if (target[0] != '/') object = path_exists(join_path(build_dir, target)) ? join_path(build_dir, target) : join_path(dir_name(file), target);
    BuildObject o = judge(object, deps, mtime_ns(object));
    if (!o.path.empty()) out.objects.push_back(std::move(o));
  }
  return out;
}

} // namespace

Result<BuildObjects> read_build_objects(const std::string& build_dir) {
  if (path_exists(join_path(build_dir, "build.ninja")) && path_exists(join_path(build_dir, ".ninja_deps"))) return from_ninja(build_dir);
  return from_dep_files(build_dir);
}

} // namespace ciq::cache::cli
