#include "wrapper/step_memo.h"

#include "spaces/control_set.h"
#include "utils/config.h"

#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"
#include "utils/text.h"
#include "wrapper/nvcc_steps.h"

#include <algorithm>
#include <fcntl.h>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::wrapper {
namespace {

constexpr std::string_view kFormat = "ciq-nvcc-step 2";
constexpr std::string_view kTempMark = "@CIQ_TMP@";
// The host object's own path (-o) is not part of what it contains: a
// candidate building into its own directory still reuses it.
constexpr std::string_view kOutputMark = "@CIQ_OUTPUT@";

struct FileState {
  long long size = 0, mtime_ns = 0;
  unsigned long long inode = 0;
  bool operator==(const FileState& o) const { return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode; }
};
using DirState = std::map<std::string, FileState>; // by path

std::optional<FileState> stat_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileState{static_cast<long long>(st.st_size),
                   static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
                   static_cast<unsigned long long>(st.st_ino)};
}

DirState scan_dir(const std::string& dir) {
  DirState out;
  auto names = list_directory(dir);
  if (!names) return out;
  for (const auto& n : *names) {
    std::string path = join_path(dir, n);
    if (auto st = stat_file(path)) out.emplace(path, *st);
  }
  return out;
}

std::vector<std::string> changed_files(const DirState& before, const DirState& after) {
  std::vector<std::string> out;
  for (const auto& [path, st] : after) {
    auto it = before.find(path);
    if (it == before.end() || !(it->second == st)) out.push_back(path);
  }
  return out;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

bool write_plain(const std::string& path, std::string_view content) {
  auto opened = open_own_file(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!opened) return false;
  int fd = *opened;
  bool ok = write_all(fd, content);
  return ::close(fd) == 0 && ok;
}

/// The part of a fatbin.c that is not the fatbinary: all but its `.quad`
/// lines, with the array's length (an extern declaration) left out.
std::string fatbin_c_skeleton(const std::string& text) {
  static const std::regex length(R"(fatbinData\[[0-9]+\])");
  std::string out;
  for (auto line : split(text, '\n'))
    if (!starts_with(trim(line), "\".quad ")) out.append(line).push_back('\n');
  return std::regex_replace(out, length, "fatbinData[]");
}

/// The section a fatbin.c puts the fatbinary in: .nv_fatbin, or
/// __nv_relfatbin for relocatable device code (-rdc).
std::optional<std::string> fatbin_c_section(const std::string& text) {
  static const std::regex section(R"re("\.section ([._A-Za-z0-9]+), )re");
  std::smatch m;
  if (!std::regex_search(text, m, section)) return std::nullopt;
  return m[1].str();
}

/// The bytes a fatbin.c puts in its section: its `.quad` words, little-endian
/// (the host is x86-64 or aarch64). std::nullopt when a line does not parse.
std::optional<std::string> fatbin_c_bytes(const std::string& text) {
  std::string out;
  for (auto line : split(text, '\n')) {
    line = trim(line);
    if (!starts_with(line, "\".quad ")) continue;
    line.remove_prefix(7);
    if (!ends_with(line, "\\n\"")) return std::nullopt;
    line.remove_suffix(3);
    for (auto word : split(line, ',')) {
      std::string w(trim(word));
      char* end = nullptr;
      unsigned long long v = std::strtoull(w.c_str(), &end, 16);
      if (w.size() < 3 || end != w.c_str() + w.size()) return std::nullopt;
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

enum class Kind { run, pure, host_compile };

/// What ciq-cicc applies in this tuning build: the NVVM stage of
/// CIQ_CONTROLS and the units it is limited to (CIQ_UNITS).
std::string nvvm_controls() {
  std::string file = env(Env::controls);
  auto text = file.empty() ? Result<std::string>(std::string()) : read_file(file);
  auto set = text ? spaces::parse_control_set(*text, file) : Result<spaces::ControlSet>(text.error());
  // An unreadable file: ciq-cicc applies nothing, as with no file.
  std::string stage = set ? spaces::format_control_set(set->nvcc_stage()) : "";
  return stage + "\n" + env(Env::units);
}

/// Path-like words of a command: each argument, and the value of --opt=value.
std::vector<std::string> named_paths(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.find('/') == std::string::npos) continue;
    out.push_back(a);
    if (auto eq = a.find('='); eq != std::string::npos && a[0] == '-') out.push_back(a.substr(eq + 1));
  }
  return out;
}

class StepRunner {
public:
  /// `tool_tmp`: the steps' own TMPDIR (cicc's `..lgenfe.bc` files), which
  /// the caller removes whether the build succeeds or fails.
  StepRunner(std::string memo_dir, std::string tmp, std::string tool_tmp, const NvccPlan& plan)
      : steps_dir_(join_path(memo_dir, "steps")), tmp_(std::move(tmp)), tool_tmp_(std::move(tool_tmp)),
        nvvm_controls_(nvvm_controls()) {
    for (const auto& [name, value] : plan.environment) environment_ += name + "=" + normalised(value) + "\n";
  }

  /// Runs or reuses one step; false when it failed.
  bool step(const std::vector<std::string>& argv, MemoOutcome& outcome);

private:
  bool inside_tmp(const std::string& path) const { return starts_with(path, tmp_ + "/"); }
  std::string normalised(const std::string& s) const { return replace_all(s, tmp_, kTempMark); }
  Kind classify(const std::vector<std::string>& argv) const;
  std::optional<std::string> key(const std::vector<std::string>& argv, Kind kind) const;
  std::optional<std::vector<std::string>> restore(const std::string& entry, const std::string& output);
  void store(const std::string& key, const std::vector<std::string>& argv, Kind kind,
             const std::vector<std::string>& outputs, const std::map<std::string, std::optional<FileState>>& outside,
             const std::string& out, const std::string& err);
  std::optional<std::string> object_section(const std::string& object, const std::string& section) const;
  bool update_fatbin_section(const std::string& object, const std::string& fatbin) const;

  std::string steps_dir_, tmp_, tool_tmp_, environment_;
  std::string nvvm_controls_; // nvvm_controls() of this build, part of ciq-cicc steps' keys
  std::set<std::string> varying_; // temporaries every candidate can change: ptxas and fatbinary outputs onwards
};

Kind StepRunner::classify(const std::vector<std::string>& argv) const {
  std::string tool = tool_of(argv);
  if (tool == "cudafe++" || tool == "cicc") return Kind::pure;
  bool compile_only = std::find(argv.begin(), argv.end(), "-c") != argv.end();
  bool host_code = std::any_of(argv.begin(), argv.end(), [&](const std::string& a) {
      return inside_tmp(a) && ends_with(a, ".cudafe1.cpp");
  });
  // With debug info the object records the fatbin array's length, which
  // the section swap cannot update.
  bool debug_info = std::any_of(argv.begin(), argv.end(), [](const std::string& a) { return starts_with(a, "-g"); });
  return compile_only && host_code && !debug_info ? Kind::host_compile : Kind::run;
}

std::optional<std::string> StepRunner::key(const std::vector<std::string>& argv, Kind kind) const {
  auto program = find_program(argv[0]);
  auto identity = program ? file_fingerprint(*program) : std::nullopt;
  if (!identity) return std::nullopt;
  std::string out = output_of(argv);
  if (kind == Kind::pure && !out.empty() && !inside_tmp(out)) return std::nullopt;
  Hasher h;
  h.add_field(kFormat);
  h.add_field(environment_);
  h.add_field(*identity);
  // Behind ciq-cicc, the candidate's NVVM-stage knobs decide the output
  // too, and argv[1] is the real cicc: identified as argv[0] is, by its
  // fingerprint. Its content (76 MB in CUDA 13.0) was read and hashed at
  // every step: 0.1 s of CPU a build, a fifth of a tuning build's CPU.
  bool behind_wrapper = base_name(argv[0]) == "ciq-cicc" && argv.size() > 1;
  std::optional<std::string> real_tool = behind_wrapper ? file_fingerprint(argv[1]) : std::nullopt;
  if (behind_wrapper) {
    if (!real_tool) return std::nullopt;
    h.add_field(nvvm_controls_);
    h.add_field(*real_tool);
  }
  for (std::size_t i = 0; i < argv.size(); ++i)
    h.add_field(kind == Kind::host_compile && i > 0 && argv[i - 1] == "-o" ? std::string(kOutputMark) : normalised(argv[i]));
  for (const auto& path : named_paths(argv)) {
    if (path == out || (behind_wrapper && path == argv[1]) || !stat_file(path)) continue;
    auto content = read_file(path);
    if (!content) return std::nullopt;
    h.add_field(normalised(path));
    h.add_field(normalised(*content));
  }
  if (kind == Kind::host_compile) {
    // What the .cudafe1.cpp can #include: every temporary, the candidate's
    // device code only through the fatbin.c's layout.
    for (const auto& [path, st] : scan_dir(tmp_)) {
      bool varies = varying_.count(path) != 0;
      if (varies && !ends_with(path, ".fatbin.c")) continue;
      auto content = read_file(path);
      if (!content) return std::nullopt;
      h.add_field(normalised(path));
      h.add_field(varies ? fatbin_c_skeleton(*content) : normalised(*content));
    }
  }
  return to_hex(h.digest());
}

/// Runs objcopy quietly; true when it succeeded.
bool objcopy(std::vector<std::string> args) {
  RunOptions options;
  options.argv = {"objcopy"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.capture_stdout = options.capture_stderr = options.stdin_null = true;
  auto run = run_process(options);
  return run && run->succeeded();
}

std::optional<std::string> StepRunner::object_section(const std::string& object, const std::string& section) const {
  std::string file = tmp_ + "/ciq-memo.section";
  if (!objcopy({"-O", "binary", "--only-section=" + section, object, file})) return std::nullopt;
  auto bytes = read_file(file);
  ::unlink(file.c_str());
  if (!bytes || bytes->empty()) return std::nullopt;
  return *bytes;
}

bool StepRunner::update_fatbin_section(const std::string& object, const std::string& fatbin_c) const {
  auto text = read_file(fatbin_c);
  auto bytes = text ? fatbin_c_bytes(*text) : std::nullopt;
  auto section = text ? fatbin_c_section(*text) : std::nullopt;
  if (!bytes || !section) return false;
  const std::string& want = *bytes;
  std::string file = tmp_ + "/ciq-memo.fatbin";
  if (!write_plain(file, want)) return false;
  bool updated = objcopy({"--update-section", *section + "=" + file, object});
  ::unlink(file.c_str());
  if (!updated) return false;
  auto got = object_section(object, *section);
  return got && *got == want;
}

// An entry is a directory: `manifest` (format, the temporary directory it
// was made in, one `output PATH` line per file, `object N FATBIN` for a host
// object), the outputs as files 0, 1, ..., and the step's stdout and stderr.
std::optional<std::vector<std::string>> StepRunner::restore(const std::string& entry, const std::string& output) {
  auto manifest = read_file(join_path(entry, "manifest"));
  if (!manifest) return std::nullopt;
  std::string stored_tmp;
  std::vector<std::string> paths;
  long object = -1;
  std::string fatbin;
  for (auto line : split(*manifest, '\n')) {
    if (starts_with(line, "tmp ")) stored_tmp = std::string(line.substr(4));
    else if (line == "output " + std::string(kOutputMark)) paths.push_back(output);
    else if (starts_with(line, "output ")) paths.push_back(replace_all(std::string(line.substr(7)), kTempMark, tmp_));
    else if (starts_with(line, "object ")) {
      auto rest = line.substr(7);
      auto space = rest.find(' ');
      auto n = parse_integer(rest.substr(0, space));
      if (!n || space == std::string_view::npos) return std::nullopt;
      object = *n;
      fatbin = replace_all(std::string(rest.substr(space + 1)), kTempMark, tmp_);
    }
  }
  // Outputs mention the directory they were made in; ours has the same
  // length (same parent, same pattern), so substituting keeps binaries valid.
  if (stored_tmp.size() != tmp_.size() || paths.empty()) return std::nullopt;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto content = read_file(join_path(entry, std::to_string(i)));
    if (!content) return std::nullopt;
    std::string bytes = replace_all(std::move(*content), stored_tmp, tmp_);
    bool is_object = static_cast<long>(i) == object;
    std::string target = is_object ? tmp_ + "/ciq-memo.o" : paths[i];
    if (!inside_tmp(target) && target != output) return std::nullopt;
    if (!write_plain(inside_tmp(target) ? target : target + ".ciq-memo", bytes)) return std::nullopt;
    if (!inside_tmp(target) && ::rename((target + ".ciq-memo").c_str(), target.c_str()) != 0) return std::nullopt;
    if (is_object) {
      if (!update_fatbin_section(target, fatbin)) return std::nullopt;
      auto finished = read_file(target);
      bool placed = finished && (inside_tmp(paths[i]) ? write_plain(paths[i], *finished)
                                                       : write_file_atomic(paths[i], *finished).ok());
      ::unlink(target.c_str());
      if (!placed) return std::nullopt;
    }
  }
  for (auto [name, fd] : {std::pair{"stdout", 1}, std::pair{"stderr", 2}})
    if (auto text = read_file(join_path(entry, name)); text && !text->empty() && !write_all(fd, *text))
      spdlog::debug("memo: cannot pass on the step's {}", name); // the caller closed it: nothing to tell
  return paths;
}

void StepRunner::store(const std::string& key, const std::vector<std::string>& argv, Kind kind,
                       const std::vector<std::string>& outputs,
                       const std::map<std::string, std::optional<FileState>>& outside, const std::string& out,
                       const std::string& err) {
  for (const auto& [path, st] : outside)
    if (stat_file(path) != st && path != output_of(argv)) {
      spdlog::debug("memo: {} changed {}, outside its temporaries; not memoised", tool_of(argv), path);
      return;
    }
  std::string manifest = std::string(kFormat) + "\ntmp " + tmp_ + "\n";
  long object = -1;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].find('\n') != std::string::npos) return;
    bool own_output = kind == Kind::host_compile && outputs[i] == output_of(argv);
    manifest += "output " + (own_output ? std::string(kOutputMark) : normalised(outputs[i])) + "\n";
    if (kind == Kind::host_compile && outputs[i] == output_of(argv)) object = static_cast<long>(i);
  }
  if (kind == Kind::host_compile) {
    std::string fatbin;
    for (const auto& path : varying_) {
      if (object < 0 || !ends_with(path, ".fatbin.c")) continue;
      auto text = read_file(path);
      auto name = text ? fatbin_c_section(*text) : std::nullopt;
      auto bytes = name ? object_section(outputs[object], *name) : std::nullopt;
      if (bytes && fatbin_c_bytes(*text) == *bytes) fatbin = path;
    }
    if (fatbin.empty()) {
      spdlog::debug("memo: the host object's fatbinary section is not one of this build's fatbin.c; not memoised");
      return;
    }
    manifest += "object " + std::to_string(object) + " " + normalised(fatbin) + "\n";
  }
  if (!make_dirs(steps_dir_)) return;
  std::string fresh = join_path(steps_dir_, ".new-XXXXXX");
  if (!::mkdtemp(fresh.data())) return;
  bool ok = write_plain(join_path(fresh, "manifest"), manifest) && write_plain(join_path(fresh, "stdout"), out) &&
            write_plain(join_path(fresh, "stderr"), err);
  for (std::size_t i = 0; ok && i < outputs.size(); ++i) {
    auto content = read_file(outputs[i]);
    ok = content && write_plain(join_path(fresh, std::to_string(i)), *content);
  }
  // Another build may have stored the same step meanwhile: theirs stays.
  if (!ok || ::rename(fresh.c_str(), join_path(steps_dir_, key).c_str()) != 0) remove_tree(fresh);
}

bool StepRunner::step(const std::vector<std::string>& argv, MemoOutcome& outcome) {
  std::string tool = tool_of(argv);
  // nvcc's `rm` lines remove its temporaries; the whole directory goes at the end.
  if (tool == "rm" && std::all_of(argv.begin() + 1, argv.end(), [&](auto& a) { return inside_tmp(a); })) return true;
  Kind kind = classify(argv);
  std::string out = output_of(argv);
  auto k = kind == Kind::run ? std::nullopt : key(argv, kind);
  if (k) {
    std::string entry = join_path(steps_dir_, *k);
    if (is_directory(entry)) {
      if (auto written = restore(entry, out)) {
        if (kind == Kind::host_compile) varying_.insert(written->begin(), written->end());
        outcome.steps_reused++;
        outcome.reused.push_back(tool);
        return true;
      }
      spdlog::debug("memo: entry {} unusable; running {}", *k, tool);
    }
  }
  std::map<std::string, std::optional<FileState>> outside;
  if (k)
    for (const auto& path : named_paths(argv))
      if (!inside_tmp(path)) outside[path] = stat_file(path);
  DirState before = scan_dir(tmp_);
  RunOptions options;
  options.argv = argv;
  // Captured, and passed on only when the step succeeds: after a failure
  // nvcc itself runs and says everything once.
  options.capture_stdout = options.capture_stderr = true;
  options.set_env = {{"TMPDIR", tool_tmp_}};
  auto run = run_process(options);
  if (!run || !run->succeeded()) {
    spdlog::debug("memo: {} {}", tool, run ? run->describe() : run.error().message);
    return false;
  }
  if (!write_all(1, run->out) || !write_all(2, run->err))
    spdlog::debug("memo: cannot pass on {}'s output", tool); // the caller closed it: nothing to tell
  outcome.steps_run++;
  std::vector<std::string> outputs = changed_files(before, scan_dir(tmp_));
  if (!out.empty() && !inside_tmp(out) && stat_file(out)) outputs.push_back(out);
  if (kind == Kind::host_compile || tool == "ptxas" || tool == "fatbinary" || tool == "nvlink")
    varying_.insert(outputs.begin(), outputs.end());
  if (k && !outputs.empty()) store(*k, argv, kind, outputs, outside, run->out, run->err);
  return true;
}

} // namespace

bool memo_unsuitable(const std::vector<std::string>& args) {
  static const std::set<std::string> unsuitable{
      "--keep", "-keep", "--keep-dir", "-keep-dir", "--save-temps", "-save-temps", "--dryrun", "-dryrun",
      "--run", "-run", "--time", "-time", "--verbose", "-v", "--list-gpu-arch", "--list-gpu-code", "-arch-ls",
      "-code-ls", "--version", "-V", "--help", "-h", "--fdevice-time-trace", "-fdevice-time-trace"};
  return std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return unsuitable.count(a.substr(0, a.find('='))) != 0;
  });
}

/// nvcc's dependency file (-MD/-MMD, as CMake asks for it) comes from an
/// internal step --dryrun cannot show: the same file comes from a separate
/// `nvcc -M`/`-MM` with the same options (test/lit/nvcc-memo.test compares
/// them). Splits `argv` into that call and the build without the dependency
/// options; std::nullopt when there is nothing to split, or a form it does
/// not know (a run of nvcc itself then).
struct DependencySplit {
  std::vector<std::string> dependencies, build;
};
std::optional<DependencySplit> split_dependency_options(const std::vector<std::string>& argv) {
  DependencySplit split;
  bool wanted = false, has_file = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    bool has_value = (a == "-MF" || a == "-MT" || a == "-MQ" || a == "-o") && i + 1 < argv.size();
    if (a == "-MD" || a == "-MMD") {
      wanted = true;
      split.dependencies.push_back(a == "-MD" ? "-M" : "-MM");
    } else if (a == "-MF" || a == "-MT" || a == "-MQ" || a == "-MP") {
      has_file = has_file || a == "-MF";
      split.dependencies.push_back(a);
      if (has_value) split.dependencies.push_back(argv[++i]);
    } else if (a == "-c" || a == "-o") {
      split.build.push_back(a);
      if (has_value) split.build.push_back(argv[++i]);
    } else if (starts_with(a, "-M") || starts_with(a, "--generate-dependenc") ||
               starts_with(a, "--generate-nonsystem-dependenc") || starts_with(a, "--dependency-")) {
      return std::nullopt;
    } else {
      split.dependencies.push_back(a);
      split.build.push_back(a);
    }
  }
  if (!wanted || !has_file) return std::nullopt;
  return split;
}

std::optional<MemoOutcome> run_nvcc_memoised(const std::vector<std::string>& nvcc_argv, const std::string& memo_dir) {
  if (auto split = split_dependency_options(nvcc_argv)) {
    RunOptions deps;
    deps.argv = split->dependencies;
    auto run = run_process(deps);
    if (!run || !run->succeeded()) return std::nullopt;
    return run_nvcc_memoised(split->build, memo_dir);
  }
  std::string tmp_parent = join_path(memo_dir, "tmp");
  if (!make_dirs(tmp_parent)) return std::nullopt;
  auto scratch = ScratchDir::create("build", tmp_parent);
  if (!scratch) return std::nullopt;
  auto tool_tmp = ScratchDir::create("tools", tmp_parent);
  if (!tool_tmp) return std::nullopt;

  RunOptions dry;
  dry.argv = nvcc_argv;
  dry.argv.push_back("--dryrun");
  dry.capture_stdout = dry.capture_stderr = true;
  dry.stdin_null = true;
  dry.set_env = {{"TMPDIR", scratch->path()}};
  auto listing = run_process(dry);
  if (!listing || !listing->succeeded() || !trim(listing->out).empty()) {
    spdlog::debug("memo: nvcc --dryrun did not give a plan; running nvcc");
    return std::nullopt;
  }
  auto plan = parse_dryrun(listing->err);
  if (!plan) {
    spdlog::debug("memo: {}", plan.error().message);
    return std::nullopt;
  }
  StepRunner runner(memo_dir, scratch->path(), tool_tmp->path(), *plan);
  MemoOutcome outcome;
  for (const auto& argv : plan->steps)
    if (!runner.step(argv, outcome)) return std::nullopt;
  return outcome;
}

} // namespace ciq::wrapper
