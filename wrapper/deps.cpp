// Tuned results in build dependencies (deps.h).
#include "wrapper/deps.h"

#include "cache/stamps.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/safe_open.h"
#include "utils/text.h"
#include "wrapper/watchdog.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <set>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

constexpr int k_compile_attempts = 3;            // an entry changed under the compile: compile again, twice at most
constexpr std::uint64_t k_list_bytes = 4 << 20;  // a list names a few stamps per ptxas step
constexpr std::uint64_t k_dep_file_bytes = 64 << 20;

/// The value of option `names` in `args`: `-MF file`, `-MF=file`.
std::optional<std::string> option_value(const std::vector<std::string>& args, std::initializer_list<std::string_view> names) {
  std::optional<std::string> found;
  for (std::size_t i = 0; i < args.size(); ++i)
    for (auto n : names) {
      if (args[i] == n && i + 1 < args.size()) found = args[i + 1];
      else if (args[i].size() > n.size() && starts_with(args[i], n) && args[i][n.size()] == '=') found = args[i].substr(n.size() + 1);
    }
  return found;
}

bool has_flag(const std::vector<std::string>& args, std::initializer_list<std::string_view> names) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return std::find(names.begin(), names.end(), a) != names.end();
  });
}

/// A path as a make/ninja dependency file spells it; "" for a path neither
/// can hold (a newline, a colon, a backslash).
std::string escaped_dependency(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '\n' || c == '\r' || c == ':' || c == '\\' || c == '\t') return "";
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

/// Where the first rule of a dependency file ends: the first line end
/// that no backslash continues; std::string::npos when there is no rule.
std::size_t first_rule_end(const std::string& text) {
  if (text.find(':') == std::string::npos) return std::string::npos;
  for (std::size_t i = text.find('\n'); i != std::string::npos; i = text.find('\n', i + 1)) {
    std::size_t j = i;
    if (j > 0 && text[j - 1] == '\r') --j;
    if (j == 0 || text[j - 1] != '\\') return i;
  }
  return text.size();
}

/// Adds `paths` to the prerequisites of the first rule of `dep_file` (the
/// object's: CMake's Makefile generator reads that rule only), and an empty
/// rule for each after it; false when it cannot (nvcc's file is then left
/// as it was). The file is replaced, never written through a link.
bool add_dependencies(const std::string& dep_file, const std::vector<std::string>& paths) {
  auto text = read_file(dep_file, k_dep_file_bytes);
  if (!text) {
    spdlog::debug("cannot read the dependency file: {}", text.error().message);
    return false;
  }
  std::size_t end = first_rule_end(*text);
  if (end == std::string::npos) {
    spdlog::debug("{} holds no rule; not adding ciq's stamps", dep_file);
    return false;
  }
  std::string more, empty_rules;
  for (const auto& p : paths) {
    std::string e = escaped_dependency(p);
    if (e.empty()) continue;
    more += " \\\n    " + e;
    empty_rules += e + " :\n";
  }
  if (more.empty()) return true;
  std::string out = text->substr(0, end) + more + "\n" + (end < text->size() ? text->substr(end + 1) : std::string());
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += empty_rules;
  if (auto w = write_file_atomic(dep_file, out); !w) {
    spdlog::debug("cannot rewrite the dependency file: {}", w.error().message);
    return false;
  }
  return true;
}

/// One line of a stamp list: what the lookup saw (empty for a pack, whose
/// whole file is the dependency), a tab, the path.
struct Listed {
  std::string seen, path;
};

std::vector<Listed> read_list(const std::string& list) {
  std::vector<Listed> out;
  auto text = read_file(list, k_list_bytes);
  if (!text) return out;
  std::set<std::string> paths;
  for (auto line : split(*text, '\n')) {
    auto tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    Listed l{std::string(line.substr(0, tab)), std::string(line.substr(tab + 1))};
    if (paths.insert(l.path).second) out.push_back(std::move(l));
  }
  return out;
}

/// True when every stamp still holds what its lookup saw.
bool unchanged(const std::vector<Listed>& listed) {
  for (const auto& l : listed) {
    if (l.seen.empty()) continue;
    auto now = read_file(l.path, 256);
    if (!now || *now != l.seen + "\n") return false;
  }
  return true;
}

/// A dependency that never exists: the unit is compiled again by the next build.
std::string never_made() { return join_path(join_path(cache_directory(), "stamps"), cache::k_tuning_build_stamp); }

} // namespace

std::optional<std::string> compile_dependency_file(const std::vector<std::string>& args) {
  if (!has_flag(args, {"-MD", "-MMD", "--generate-dependencies-with-compile", "--generate-nonsystem-dependencies-with-compile"}))
    return std::nullopt;
  if (has_flag(args, {"-M", "-MM", "--generate-dependencies", "--generate-nonsystem-dependencies", "-E", "--preprocess"}) ||
      option_value(args, {"-optf", "--options-file"}))
    return std::nullopt;
  if (auto mf = option_value(args, {"-MF", "--dependency-output"})) return mf;
  // Without -MF nvcc names it after -o, with the suffix replaced by .d.
  auto out = option_value(args, {"-o", "--output-file"});
  if (!out || out->empty()) return std::nullopt;
  std::string base = base_name(*out);
  auto dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? *out + ".d" : out->substr(0, out->size() - (base.size() - dot)) + ".d";
}

bool stamps_wanted() { return !env(Env::stamps_out).empty() && env(Env::controls).empty(); }

std::vector<std::string> local_stamp_texts(cache::Storage& storage, const std::vector<Hash128>& keys) {
  std::vector<std::string> texts;
  for (const auto& key : keys) {
    auto record = storage.local_text(key);
    texts.push_back(record ? cache::stamp_text(*record) : std::string());
  }
  return texts;
}

void list_stamps(const std::vector<Hash128>& keys, const std::vector<std::string>& seen, const std::vector<std::string>& now) {
  std::string cache_dir = cache_directory();
  std::string lines;
  for (std::size_t i = 0; i < keys.size() && i < seen.size() && i < now.size(); ++i) {
    if (seen[i].empty() || now[i].empty()) continue;  // the cache could not be read: no stamp to promise
    auto path = cache::stamp_for_lookup(cache_dir, keys[i], seen[i], now[i]);
    if (path) lines += std::string(trim(seen[i])) + "\t" + *path + "\n";
  }
  for (auto pack : split(env(Env::packs), ':'))
    if (!pack.empty())
      if (auto full = real_path(std::string(pack))) lines += "\t" + *full + "\n";
  if (lines.empty()) return;
  auto fd = open_own_file(env(Env::stamps_out), O_WRONLY | O_APPEND);
  if (!fd) {
    spdlog::debug("CIQ_STAMPS_OUT: {}", fd.error().message);
    return;
  }
  if (!write_all(*fd, lines)) spdlog::debug("cannot list the stamps in CIQ_STAMPS_OUT");
  ::close(*fd);
}

void mark_tuning_build(const std::string& dep_file) { add_dependencies(dep_file, {never_made()}); }

void run_nvcc_with_stamps(const std::string& real, const std::vector<std::string>& argv, const std::string& dep_file) {
  bool tuning = !env(Env::controls).empty();
  std::optional<ScratchDir> scratch;
  if (!tuning) {
    auto made = ScratchDir::create("ciq-nvcc");
    if (made) scratch.emplace(std::move(*made));
    else spdlog::debug("no stamps for this compile: {}", made.error().message);
  }
  RunOptions options;
  options.argv = argv;
  std::optional<RunResult> ran;
  std::vector<Listed> listed;
  bool consistent = true;
  for (int attempt = 0; attempt < k_compile_attempts; ++attempt) {
    std::string list;
    if (scratch) {
      list = join_path(scratch->path(), "stamps-" + std::to_string(attempt));
      auto fd = create_new_file(list, O_WRONLY, 0600);
      if (fd) {
        ::close(*fd);
        ::setenv(env_name(Env::stamps_out), list.c_str(), 1);
      } else {
        list.clear();
      }
    }
    auto result = run_real_tool(options);
    if (!result) {
      spdlog::debug("{}", result.error().message);
      scratch.reset();
      stop_watchdog();
      Error e = exec_replace(real, argv);
      std::fprintf(stderr, "ciq-nvcc: error: %s\n", printable_lines(e.message).c_str());
      std::exit(127);
    }
    ran = std::move(*result);
    give_output(*ran, "");  // its output went straight to ours: a crash from here on ends like nvcc
    if (!ran->succeeded() || list.empty()) break;
    listed = read_list(list);
    consistent = unchanged(listed);
    if (consistent) break;
    spdlog::info("a cache entry this compile looked up changed while it ran; compiling again");
  }
  ::unsetenv(env_name(Env::stamps_out));
  scratch.reset();
  if (ran->succeeded()) {
    std::vector<std::string> paths;
    if (tuning || !consistent) paths.push_back(never_made());
    for (const auto& l : listed) paths.push_back(l.path);
    if (!paths.empty()) add_dependencies(dep_file, paths);
  }
  exit_like(*ran);
}

} // namespace ciq::wrapper
