// <run dir>/command-line and working-directory: how the run was started,
// saved so that --resume (and a retune) can run it again from anywhere.
#pragma once

#include "utils/result.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

/// `args` with the password of every --publish URL masked (***, as
/// redact_secrets() writes it): what may be saved or passed on where others
/// can read it (a file, a child's argv). A --publish so masked takes its
/// password from CIQ_PUBLISH, or from --publish given again.
std::vector<std::string> without_publish_password(const std::vector<std::string>& args);

/// Why an option of `run` is left out when the tuner passes its own
/// arguments on to another run (a campaign's runs, a replay, a retune, a
/// reverify). Each option that a forwarded run must not inherit as given is
/// in one group, by its help category (tuner_main.cpp, k_group_names), so
/// that a new option is placed where it is declared and every forwarder
/// follows; an option in no group is passed on.
enum OptionGroup : unsigned {
  group_none = 0,
  group_output = 1u << 0,      // --out, --json: where a run writes and how it answers
  group_resume = 1u << 1,      // --resume
  group_earlier_run = 1u << 2, // --discovery-from, --replaces-run, --memo-dir: what it takes from or shares with other runs
  group_shipping = 1u << 3,    // --publish, --no-ship
  group_seeds = 1u << 4,       // --seed-controls, --seed-hint, --verify-controls
  group_program = 1u << 5,     // --build, --bench, --check, --bench-server, --metric, --objective, --direction, --prefer, --shell
  group_kernels = 1u << 6,     // --kernels, --separately
};

/// What the tool's parser says of option `name` (without dashes) of
/// `ciq-tuner SUBCOMMAND`. The tool sets it once, from its parser's own
/// registry (ciq-tuner: llvm::cl's, by cli::registered_option), so every
/// place that reads or forwards the tuner's arguments reads them as the
/// parser does and none keeps a list of options: which take a value, which
/// exist in a subcommand, and their groups are declared with the options.
struct OptionFacts {
  bool registered = false;   // an option of that subcommand
  bool takes_value = false;  // its value is the next argument when not joined by '='
  unsigned groups = group_none;
};
using OptionGrammar = std::function<OptionFacts(std::string_view subcommand, std::string_view name)>;
void set_option_grammar(OptionGrammar grammar);

/// One argument list read as the parser reads it: each option's name
/// (without dashes) and where it and its value stand; operands (words not
/// starting with '-', the subcommand of a saved command line, "--" and
/// every word after it) have no name.
struct ParsedArgument {
  std::string name;        // "" for an operand
  std::size_t first = 0;   // the option's index in the list
  std::size_t count = 1;   // 2 when its value is the next argument
  std::string value;       // joined by '=' or the next argument; "" when it has none

  /// A flag's setting as LLVM's parser reads it: given alone, `=true`,
  /// `=TRUE`, `=True` or `=1` is on; `=false`, `=FALSE`, `=False` or `=0`
  /// off (a saved command line parsed already, so nothing else occurs).
  bool flag_on() const { return !(value == "false" || value == "FALSE" || value == "False" || value == "0"); }
};
std::vector<ParsedArgument> parse_arguments(const std::vector<std::string>& arguments, std::string_view subcommand);

/// The one filter for passing the tuner's arguments on: `arguments` (of
/// `ciq-tuner FROM`) as a `ciq-tuner TO` gets them. Left out, each with its
/// value (joined by '=', or the next argument for an option that takes
/// one): the options of FROM that TO does not have (a campaign's own, for
/// its runs; one that neither has goes on, to be refused there), those in
/// any of the `drop` groups (OptionGroup), and those that
/// `set` gives again; then `set` is appended. The rest stays as it was,
/// values included, even a value that looks like an option (`--build
/// --out`), and every word after "--". Without a grammar every option is
/// taken to be TO's and in no group, so only `set` replaces.
std::vector<std::string> forward_arguments(const std::vector<std::string>& arguments, std::string_view from, std::string_view to,
                                           unsigned drop, const std::vector<std::string>& set = {});

/// Writes <dir>/command-line for --resume: the arguments as given, but
/// without_publish_password(), and readable by its owner only (0600),
/// because the commands in it (--build, --bench) may hold tokens of their
/// own that must be saved as given for --resume to rerun them. A first line
/// names the format, then one argument a line, a backslash written as
/// `\\` and a newline as `\n`, so that every argument (a multi-line
/// --build script, an empty one) comes back as it was given.
Result<void> save_command_line(const std::string& dir, const std::vector<std::string>& args);

/// Writes <dir>/run-id: 32 random hex digits naming this run (not its
/// directory: an --out path may be used again, by a later run or on
/// another machine whose pack comes here). Entries record it (ship.cpp), so
/// that a retune runs, and --drop-losers replaces, only what that run made.
Result<void> save_run_id(const std::string& dir);

/// <dir>/run-id's id; "" when there is none (a run from before ids) or it
/// is not one.
std::string read_run_id(const std::string& dir);

/// Writes <dir>/working-directory: this process's current directory, where
/// a --resume from elsewhere runs the commands (their relative paths).
Result<void> save_working_directory(const std::string& dir);

/// The arguments of a command-line file's text, as save_command_line() wrote
/// them; a file from before the format line (one argument a line, as
/// written, empty lines skipped) is read as it was then.
std::vector<std::string> parse_command_line(std::string_view text);

/// Why the run directory's file at `path` (command-line, working-directory)
/// is not one to take commands or a directory from, in a few words:
/// unreadable, not a regular file (a link included), another user's, or
/// writable by group or others (they could have put their own commands in
/// it); "" when it is the user's own; std::nullopt when there is none.
std::optional<std::string> untrusted_run_file(const std::string& path);

/// The directory a working-directory file's text names: the path as it was
/// written, less the one newline after it.
std::string parse_working_directory(std::string_view text);

/// How a run was started, read back to run its commands again as this user.
struct SavedStart {
  std::string dir;                    // the run directory's real path
  std::vector<std::string> arguments; // the subcommand ("run", "campaign"), then its options
  std::string working_directory;      // where it ran; "" when none was saved (a campaign from before campaigns saved one)
  std::string run_id;                 // read_run_id() of the directory
};

/// The one reader of a run directory's command-line and working-directory
/// for running them again (run and campaign --resume, retune, reverify).
/// Its commands would run as you, so it refuses (code "unsafe") what
/// another local user could have prepared: a run directory that is not
/// yours alone, or reached through a link of theirs (check_own_directory;
/// the files are read from its real path); a file that is not a regular
/// file of yours or that group or others may write (untrusted_run_file);
/// a working directory that is not yours alone (check_command_directory).
/// Code "missing": no command-line; "gone": the working directory no longer
/// exists; "invalid": a file larger than one ciq writes, an argument with a
/// NUL, or a working-directory file that names no absolute path on one
/// line, or a path that is not a directory (damaged, or edited by hand).
/// Messages name the file or directory ("the run's command line ... is
/// writable by other users (mode 0602)"); callers add what follows.
Result<SavedStart> load_saved_start(const std::string& dir);

/// Whether saved commands may run in `dir`: check_secure_location(), and
/// the directory itself writable by nobody else, not even with the sticky
/// bit (others could add a file the commands read, by a relative path,
/// once the user's is gone). An "unsafe" error naming why otherwise.
Result<void> check_command_directory(const std::string& dir);

} // namespace ciq::tuner
