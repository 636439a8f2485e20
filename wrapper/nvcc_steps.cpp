#include "wrapper/nvcc_steps.h"

#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <wordexp.h>

namespace ciq::wrapper {

static Result<std::vector<std::string>> shell_words(const std::string& line) {
  wordexp_t words;
  int rc = ::wordexp(line.c_str(), &words, WRDE_NOCMD | WRDE_UNDEF);
  if (rc != 0) {
    if (rc == WRDE_NOSPACE) ::wordfree(&words);
    return make_error("parse", "nvcc --dryrun line needs a shell (wordexp status " + std::to_string(rc) + "): " + line);
  }
  std::vector<std::string> out(words.we_wordv, words.we_wordv + words.we_wordc);
  ::wordfree(&words);
  return out;
}

static bool is_assignment(std::string_view line, std::size_t& eq) {
  eq = line.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  for (std::size_t i = 0; i < eq; ++i) {
    char c = line[i];
    bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

/// With --threads (-t), nvcc sends each step's output to temporaries of its
/// own (`... > /tmp/tmpxft_..._stdout 2>/tmp/tmpxft_..._stderr`) and prints
/// them once the steps are done. Run in order, a step's output can go
/// straight through: the redirection is dropped. Only that form, to nvcc's
/// temporaries, is; any other redirection still needs a shell.
static std::string without_output_files(std::string_view line) {
  static const std::regex to_temporaries("\\s+>\\s*\"?/\\S*" + std::string(kFixedTempStem) + "\\S*_stdout\"?\\s+2>\\s*\"?/\\S*" +
                                         std::string(kFixedTempStem) + "\\S*_stderr\"?\\s*$");
  return std::regex_replace(std::string(line), to_temporaries, "");
}

Result<NvccPlan> parse_dryrun(std::string_view listing, bool skip_unsplittable) {
  static const std::regex temp_stem("tmpxft_[0-9a-f]{8}_[0-9a-f]{8}");
  std::string renamed = std::regex_replace(std::string(listing), temp_stem, std::string(kFixedTempStem));
  NvccPlan plan;
  std::size_t start = 0;
  while (start < renamed.size()) {
    std::size_t end = renamed.find('\n', start);
    if (end == std::string::npos) end = renamed.size();
    std::string_view line(renamed.data() + start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 3) != "#$ ") {
      if (skip_unsplittable || line.find_first_not_of(" \t") == std::string_view::npos) continue;
      return make_error("parse", "unexpected line in nvcc --dryrun output: " + std::string(line));
    }
    line.remove_prefix(3);
    std::size_t eq;
    if (is_assignment(line, eq)) {
      std::string name(line.substr(0, eq));
      auto value = shell_words(std::string(line.substr(eq + 1)));
      // Multi-word values (INCLUDES="..." "...") are nvcc's own bookkeeping,
      // already expanded into the command lines; a shell would not export them.
      if (!value || value->size() > 1) continue;
      std::string v = value->empty() ? "" : value->front();
      ::setenv(name.c_str(), v.c_str(), 1);
      plan.environment.emplace_back(std::move(name), std::move(v));
      continue;
    }
    auto argv = shell_words(without_output_files(line));
    if (!argv && skip_unsplittable) continue;
    if (!argv) return argv.error();
    if (argv->empty()) continue;
    plan.steps.push_back(std::move(*argv));
  }
  if (plan.steps.empty()) return make_error("parse", "nvcc --dryrun listed no steps");
  return plan;
}

std::string tool_of(const std::vector<std::string>& argv) {
  if (argv.size() > 1 && base_name(argv[1]) == "ptxas") return "ptxas";
  if (argv.size() > 1 && base_name(argv[1]) == "cicc") return "cicc";
  return argv.empty() ? "" : base_name(argv[0]);
}

std::string output_of(const std::vector<std::string>& argv) {
  std::string out;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-o") out = argv[i + 1];
  return out;
}

namespace {

// The value of `-arch` in `argv` (`-arch X` for cicc, `-arch=X` for
// ptxas), or "".
std::string arch_of(const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "-arch" && i + 1 < argv.size()) return argv[i + 1];
    if (starts_with(argv[i], "-arch=")) return argv[i].substr(6);
  }
  return "";
}

} // namespace

std::optional<bool> reaches_machine_code(const NvccPlan& plan, std::string_view arch) {
  std::vector<std::string> outputs;  // what the cicc steps for `arch` write
  for (const auto& step : plan.steps)
    if (tool_of(step) == "cicc" && arch_of(step) == arch) outputs.push_back(output_of(step));
  if (outputs.empty()) return std::nullopt;
  for (const auto& out : outputs)
    if (!ends_with(out, ".ptx")) return true;  // LTO IR (or unknown): to the link
  for (const auto& step : plan.steps) {
    if (tool_of(step) != "ptxas" || output_of(step).empty() || !starts_with(arch_of(step), "sm_")) continue;
    for (const auto& a : step)
      if (std::find(outputs.begin(), outputs.end(), a) != outputs.end()) return true;
  }
  return false;
}

} // namespace ciq::wrapper
