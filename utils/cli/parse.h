// Command-line parsing for ciq's LLVM-based tools (ciq-cache, ciq-tuner):
// LLVM's cl parser writes its mistakes as "<tool>: Unknown command line
// argument ..." and exits; ciq's tools answer every mistake in one form,
// "<tool>: error: ...", and exit 2. A separate library (ciq_cli): the
// wrappers never link LLVM.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ciq::cli {

/// Parses argv with llvm::cl. On a mistake returns what LLVM said (also
/// what it writes straight to llvm::errs(), caught meanwhile) instead of
/// its exit(1); std::nullopt when the command line was good. `<tool> SUB
/// --help` prints SUB's own help (help.h) and exits 0; `overview` is
/// printed by `<tool> --help` only.
std::optional<std::string> parse_command_line(int argc, const char* const* argv, const char* overview);

/// Whether option `name` (without dashes) of the registered subcommand
/// `subcommand` ("" or an unknown name: the top level) takes its value as
/// the next argument when not joined by '=' (llvm::cl::ValueRequired; a
/// flag or an option whose value is optional never does); false for an
/// option that is not registered there.
bool takes_separate_value(std::string_view subcommand, std::string_view name);

/// Writes LLVM's words in ciq's form: the first line as "<tool>: error:",
/// the rest (LLVM's suggestions, its "Try: '<tool> --help'") as
/// "<tool>: note:". Returns the error (the first line, without the prefix).
std::string report_parse_errors(const std::string& tool, const std::string& text);

} // namespace ciq::cli
