// `<tool> SUB --help` for ciq's LLVM-based tools: the subcommand's own usage
// line first, then its description and options, without the tool's
// overview (that is for `<tool> --help` alone). LLVM's printer puts the
// whole overview, then a "SUBCOMMAND" line, before the usage: 117 lines
// before `run`'s first option.
#pragma once

namespace ciq::cli {

/// When argv is `<tool> SUB ... --help` (or -help, -h, --help-hidden,
/// before any "--") and SUB is a registered subcommand, prints SUB's help to
/// stdout and returns true; the caller then exits 0, as LLVM's printer
/// does. False, having printed nothing, for any other command line.
bool print_subcommand_help(int argc, const char* const* argv);

} // namespace ciq::cli
