// Command-line parsing for ciq's LLVM-based tools (ciq-cache, ciq-tuner):
// LLVM's cl parser writes its mistakes as "<tool>: Unknown command line
// argument ..." and exits; ciq's tools answer every mistake in one form,
// "<tool>: error: ...", and exit 2. A separate library (ciq_cli): the
// wrappers never link LLVM.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::cli {

/// Parses argv with llvm::cl. On a mistake returns what LLVM said (also
/// what it writes straight to llvm::errs(), caught meanwhile) instead of
/// its exit(1); std::nullopt when the command line was good. `<tool> SUB
/// --help` prints SUB's own help (help.h) and exits 0; `overview` is
/// printed by `<tool> --help` only.
std::optional<std::string> parse_command_line(int argc, const char* const* argv, const char* overview);

/// What llvm::cl's registry says of option `name` (without dashes) of the
/// registered subcommand `subcommand` ("" or an unknown name: the top
/// level); std::nullopt when no such option is registered there.
struct RegisteredOption {
  /// Takes its value as the next argument when not joined by '='
  /// (llvm::cl::ValueRequired; a flag or an option whose value is optional
  /// never does).
  bool takes_separate_value = false;
  /// The names of its categories (cl::cat), as its --help groups it.
  std::vector<std::string> categories;
};
std::optional<RegisteredOption> registered_option(std::string_view subcommand, std::string_view name);

/// Writes LLVM's words in ciq's form: the first line as "<tool>: error:",
/// the rest (LLVM's suggestions, its "Try: '<tool> --help'") as
/// "<tool>: note:". Returns the error (the first line, without the prefix).
std::string report_parse_errors(const std::string& tool, const std::string& text);

} // namespace ciq::cli
