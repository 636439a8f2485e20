#include "tuner/rundir/command_line.h"

#include "utils/files.h"
#include "utils/redis.h"
#include "utils/safe_open.h"
#include "utils/text.h"

#include <algorithm>
#include <random>
#include <optional>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::tuner {

namespace {

OptionGrammar& grammar() {
  static OptionGrammar g;
  return g;
}

} // namespace

void set_option_grammar(OptionGrammar g) { grammar() = std::move(g); }

std::vector<ParsedArgument> parse_arguments(const std::vector<std::string>& arguments, std::string_view subcommand) {
  std::vector<ParsedArgument> out;
  bool operands_only = false; // after "--": a program's own arguments
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    bool operand = operands_only || a == "--" || a.size() < 2 || a[0] != '-';
    operands_only = operands_only || a == "--";
    if (operand) {
      out.push_back(ParsedArgument{"", i, 1, ""});
      continue;
    }
    std::string name = a.substr(a.find_first_not_of('-'));
    std::size_t equals = name.find('=');
    std::string joined = equals == std::string::npos ? "" : name.substr(equals + 1);
    name = name.substr(0, equals);
    // Without a grammar (a program that never set one) an option is taken
    // to stand alone: its value, if any, is then kept as an operand.
    bool valued = equals == std::string::npos && grammar() && grammar()(subcommand, name).takes_value && i + 1 < arguments.size();
    out.push_back(ParsedArgument{name, i, valued ? 2u : 1u, valued ? arguments[i + 1] : joined});
    if (valued) ++i;
  }
  return out;
}

std::vector<std::string> forward_arguments(const std::vector<std::string>& arguments, std::string_view from, std::string_view to,
                                           unsigned drop, const std::vector<std::string>& set) {
  std::vector<std::string> replaced;
  for (const auto& p : parse_arguments(set, to))
    if (!p.name.empty()) replaced.push_back(p.name);
  std::vector<std::string> out;
  for (const auto& p : parse_arguments(arguments, from)) {
    if (!p.name.empty()) {
      OptionFacts facts = grammar() ? grammar()(to, p.name) : OptionFacts{true, false, group_none};
      // One that neither has (a saved command line's, from another version)
      // goes on, for the receiving run to refuse with the reason.
      bool only_from = !facts.registered && grammar() && grammar()(from, p.name).registered;
      if (only_from || (facts.groups & drop) != 0) continue;
      if (std::find(replaced.begin(), replaced.end(), p.name) != replaced.end()) continue;
    }
    for (std::size_t k = 0; k < p.count; ++k) out.push_back(arguments[p.first + k]);
  }
  out.insert(out.end(), set.begin(), set.end());
  return out;
}

std::vector<std::string> without_publish_password(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  // Read as the parser reads them: a --publish that is another option's
  // value (`--build --publish`) is not one, and after "--" nothing is.
  for (const auto& p : parse_arguments(args, "run")) {
    const std::string& given = args[p.first];
    if (p.name != "publish") {
      for (std::size_t k = 0; k < p.count; ++k) out.push_back(args[p.first + k]);
    } else if (p.count == 2) {
      out.insert(out.end(), {given, redact_secrets(p.value)});
    } else if (auto equals = given.find('='); equals != std::string::npos) {
      out.push_back(given.substr(0, equals) + "=" + redact_secrets(p.value));
    } else {
      out.push_back(given);
    }
  }
  return out;
}

namespace {

// The first line of a command-line file in the escaped format.
constexpr std::string_view k_format_line = "# ciq-tuner command line, format 2: one argument a line, \\\\ and \\n escaped";

} // namespace

Result<void> save_command_line(const std::string& dir, const std::vector<std::string>& args) {
  std::string saved = std::string(k_format_line) + "\n";
  for (const auto& a : without_publish_password(args)) {
    for (char c : a) {
      if (c == '\\') saved += "\\\\";
      else if (c == '\n') saved += "\\n";
      else saved += c;
    }
    saved += '\n';
  }
  // 0600: the commands in it may hold tokens of their own.
  return write_file_atomic(join_path(dir, "command-line"), saved, 0600);
}

Result<void> save_run_id(const std::string& dir) {
  std::random_device random;
  char id[40];
  std::snprintf(id, sizeof id, "%08x%08x%08x%08x", unsigned(random()), unsigned(random()), unsigned(random()), unsigned(random()));
  return write_file_atomic(join_path(dir, "run-id"), std::string(id) + "\n");
}

std::string read_run_id(const std::string& dir) {
  auto text = read_file(join_path(dir, "run-id"), 64);
  if (!text) return "";
  std::string id(trim(*text));
  bool hex = id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex ? id : "";
}

Result<void> save_working_directory(const std::string& dir) {
  char here[4096];
  if (!::getcwd(here, sizeof here)) return make_error("io", std::string("cannot name the current directory: ") + std::strerror(errno));
  return write_file_atomic(join_path(dir, "working-directory"), std::string(here) + "\n");
}

std::vector<std::string> parse_command_line(std::string_view text) {
  std::vector<std::string> args;
  bool escaped = text.substr(0, text.find('\n')) == k_format_line;
  if (escaped) text.remove_prefix(std::min(text.size(), k_format_line.size() + 1));
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!escaped) {
      if (!line.empty()) args.emplace_back(line);
      continue;
    }
    std::string arg;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '\\' || line[i + 1] == 'n')) {
        arg += line[++i] == 'n' ? '\n' : '\\';
      } else {
        arg += line[i];
      }
    }
    args.push_back(std::move(arg));
  }
  return args;
}

std::optional<std::string> untrusted_run_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return errno == ENOENT ? std::nullopt : std::optional<std::string>(std::string("unreadable: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != ::getuid()) return "another user's (uid " + std::to_string(st.st_uid) + ")";
  return writable_by_others(st.st_mode);
}

std::string parse_working_directory(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return std::string(text);
}

namespace {

// A saved command line or working directory is a few KiB; what is larger
// is not one ciq wrote.
constexpr std::uint64_t k_max_saved_bytes = std::uint64_t(1) << 20;

// The text of the run's file at `path` (described as `what`), or why it is
// not one to take commands or a directory from; nullopt when it is missing.
Result<std::optional<std::string>> trusted_run_file(const std::string& path, const std::string& what) {
  auto why = untrusted_run_file(path);
  if (!why) return std::optional<std::string>(); // missing
  if (!why->empty()) return make_error(ciq::errc::unsafe, "the run's " + what + " " + path + " is " + *why);
  auto text = read_file(path, k_max_saved_bytes);
  if (!text) return make_error("invalid", "the run's " + what + " " + path + " is unreadable: " + text.error().message);
  return std::optional<std::string>(std::move(*text));
}

} // namespace

Result<SavedStart> load_saved_start(const std::string& dir) {
  if (!is_directory(dir)) return make_error(ciq::errc::missing, "the run directory " + dir + " does not exist");
  // Checked before anything is read: another user's link flipped between
  // two directories would otherwise have one file read from each.
  if (auto own = check_own_directory(dir); !own)
    return make_error(ciq::errc::unsafe, "the run directory " + dir + " is not yours alone (" + own.error().message + ")");
  auto real = real_path(dir);
  if (!real) return make_error(ciq::errc::missing, "the run directory " + dir + " cannot be resolved");
  SavedStart saved;
  saved.dir = *real;
  std::string line_file = join_path(saved.dir, "command-line");
  auto line = trusted_run_file(line_file, "command line");
  if (!line) return line.error();
  if (!*line) return make_error(ciq::errc::missing, "the run's command line " + line_file + " is missing");
  saved.arguments = parse_command_line(**line);
  // Which run the directory holds: trusted as the other files are (another
  // user's id would make your entries another run's, or theirs yours).
  std::string id_file = join_path(saved.dir, "run-id");
  if (auto why = untrusted_run_file(id_file); why && !why->empty())
    return make_error(ciq::errc::unsafe, "the run's id file " + id_file + " is " + *why);
  saved.run_id = read_run_id(saved.dir);
  // A NUL cannot reach a process in an argument: the run would get less
  // than the dry run shows.
  for (const auto& a : saved.arguments)
    if (a.find('\0') != std::string::npos)
      return make_error("invalid", "the run's command line " + line_file + " holds a NUL byte (damaged, or edited by hand)");
  auto where = trusted_run_file(join_path(saved.dir, "working-directory"), "working-directory file");
  if (!where) return where.error();
  if (!*where) return saved;
  saved.working_directory = parse_working_directory(**where);
  const std::string& w = saved.working_directory;
  // One absolute path on one line, as save_working_directory() wrote it.
  if (w.empty() || w.front() != '/' || w.find('\0') != std::string::npos || w.find('\n') != std::string::npos ||
      w.size() > 4096)
    return make_error("invalid", "the run's working-directory file names no absolute path on one line (damaged, or edited by hand)");
  struct stat st {};
  if (::stat(w.c_str(), &st) != 0)
    return make_error("gone", "the directory the run ran in, " + w + ", is gone: its commands' relative paths mean nothing elsewhere");
  if (!S_ISDIR(st.st_mode)) return make_error("invalid", "the run's working directory " + w + " is not a directory (edited by hand?)");
  if (auto own = check_command_directory(w); !own)
    return make_error(ciq::errc::unsafe, "the directory the run ran in, " + w + ", is not yours alone (" + own.error().message + ")");
  return saved;
}

Result<void> check_command_directory(const std::string& dir) {
  // A directory another user could change (theirs, one they may write in,
  // or below one), made again after /tmp was cleaned, say, holds what they
  // put there.
  if (auto secure = check_secure_location(dir); !secure) return secure;
  // Nor one they may add files to, sticky or not (/tmp itself, a 1777
  // project folder): a file its commands name that is gone now would be
  // theirs.
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {}; // gone: the caller's use of it says so
  if (std::string others = writable_by_others(st.st_mode); !others.empty())
    return make_error(ciq::errc::unsafe, "'" + dir + "' is " + others + ": they could add the files its commands read, the sticky bit does not stop that");
  return {};
}

} // namespace ciq::tuner
