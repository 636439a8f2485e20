#include "tuner/run/resume.h"

#include "tuner/rundir/command_line.h"
#include "utils/files.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ciq::tuner {

namespace {

// The run directory --resume names, read as retune and reverify read a run
// (its commands run as you: nothing another user could have prepared),
// from its real path; the errors say which it is not.
Result<SavedStart> saved_start(const std::string& dir) {
  if (!is_directory(dir)) return make_error("invalid", "'" + dir + "' is not a run directory (no such directory)");
  auto start = load_saved_start(dir);
  if (start) return start;
  const Error& e = start.error();
  if (e.code == errc::unsafe)
    return make_error(errc::unsafe, "'" + dir + "' is not resumed (its commands would run as you): " + e.message);
  if (e.code == errc::missing) return make_error("invalid", "'" + dir + "' is not a run directory: " + e.message);
  return make_error("invalid", "'" + dir + "' is not resumed: " + e.message);
}

// What the run searches and is scored on stays as it was started: the
// journal holds candidates of that space and values of those objectives (a
// resume that changed them would mix two searches).
Result<void> refuse_changes(const std::vector<ParsedArgument>& given) {
  static const char* const fixed[] = {"param", "space", "objective", "metric", "direction", "kernels", "stages",
                                      "acf-candidates", "seed-controls", "seed-hint", "replay", "out", "separately"};
  for (const auto& p : given)
    for (const char* f : fixed)
      if (p.name == f)
        return make_error(errc::usage, "--resume continues the run as it was started: --" + p.name +
                                                     " would change what it searches or how candidates are scored "
                                                     "(start a new run with another --out instead)");
  return {};
}

// The run's commands and the relative paths in them mean what they meant:
// this process moves to the run's original working directory (saved in
// DIR/working-directory), checked again once there.
Result<void> enter_working_directory(const SavedStart& start) {
  const std::string& original = start.working_directory;
  char here[4096];
  if (original.empty()) {
    // Saved by none (a campaign from before it saved one): its commands
    // run here, which must be no other user's place either.
    if (auto secure = check_command_directory("."); !secure)
      return make_error(errc::unsafe, "'" + start.dir + "' names no working directory, and this one is not yours alone (" +
                                                    secure.error().message + "): resume it from the directory it was started in");
    return {};
  }
  if (::getcwd(here, sizeof here) && original == here) return {};
  if (::chdir(original.c_str()) != 0)
    return make_error("invalid", "cannot resume in the run's working directory " + original + ": " + std::strerror(errno));
  // Checked again where this process now is: the directory checked a
  // moment ago, not one another user made in its place since.
  if (auto here_too = check_command_directory("."); !here_too)
    return make_error(errc::unsafe, "'" + start.dir + "' is not resumed (its commands would run as you): the run's working directory " +
                                                  original + " changed under it (" + here_too.error().message + ")");
  std::fprintf(stderr, "ciq-tuner: resuming in the run's working directory %s\n", original.c_str());
  return {};
}

} // namespace

Result<std::vector<std::string>> with_saved_command_line(std::vector<std::string> args) {
  if (args.size() < 3) return args;
  std::vector<std::string> given(args.begin() + 2, args.end());
  std::vector<ParsedArgument> parsed = parse_arguments(given, args[1]);
  auto resume = std::find_if(parsed.begin(), parsed.end(), [](const ParsedArgument& p) { return p.name == "resume"; });
  if (resume == parsed.end()) return args;
  std::size_t at = 2 + resume->first + resume->count - 1; // the argument holding DIR
  bool joined = resume->count == 1 && args[at].find('=') != std::string::npos;
  if (resume->count == 1 && !joined) return args; // --resume last: the parser says what is missing
  // --resume '' (a variable that expanded to nothing) names no run: said
  // as such, not as the options a new run would lack.
  if (resume->value.empty())
    return make_error(errc::usage, "--resume '' names no run directory: give the directory of the run to continue");
  auto start = saved_start(resume->value);
  if (!start) return start.error();
  args[at] = (joined ? args[at].substr(0, args[at].find('=') + 1) : "") + start->dir;
  parsed.erase(resume);
  if (auto kept = refuse_changes(parsed); !kept) return kept.error();
  std::vector<std::string> merged{args[0]};
  for (auto& a : start->arguments) merged.push_back(std::move(a));
  for (std::size_t k = 2; k < args.size(); ++k) merged.push_back(args[k]);
  if (auto entered = enter_working_directory(*start); !entered) return entered.error();
  return merged;
}

} // namespace ciq::tuner
