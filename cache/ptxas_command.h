// Reading a ptxas command line the way ptxas does, without ever rejecting
// it: which inputs, which target, which output, and which of the user's
// flags change code generation (those go into cache keys). Options ptxas
// itself does not know are kept verbatim, so they split keys rather than
// being silently dropped.
#pragma once

#include "utils/result.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq::cache {

struct PtxasInput {
  std::size_t arg_index;  // position in the scanned argument list
  bool is_string = false; // --input-as-string: the argument is PTX text
  std::string value;      // path, or PTX text
  bool is_stdin = false;  // "-": ptxas reads standard input
};

struct PtxasCommand {
  std::vector<PtxasInput> inputs;
  std::string target;                // --gpu-name / -arch value; "" when absent
  std::optional<std::string> output; // -o value; absent for nvcc's syntax check
  std::vector<std::size_t> output_args; // positions of the -o option and its value in the scanned list
  bool verbose = false;              // -v given by the caller
  bool info_only = false;            // --version, --help, --list-version
  bool user_controls = false;        // the caller's own --apply-controls
  bool uses_options_file = false;
  /// Codegen-relevant flags by long name ("" for flags without a value),
  /// with ptxas' defaults (-m64, -O3, ...) dropped.
  std::map<std::string, std::string> codegen_flags;

  /// The codegen flags as one canonical string for keys: "name=value ...".
  std::string canonical_flags() const;
};

/// Scans ptxas arguments (without argv[0]). Fails only on what ptxas would
/// also reject (an option missing its value, an unreadable --options-file);
/// callers in wrapper/ then run ptxas unchanged.
Result<PtxasCommand> scan_ptxas_args(const std::vector<std::string>& args);

/// The arguments a capture's compile.json gives for ptxas (another user's
/// text: tuner/formats/capture.h), rebuilt from what they mean for code
/// generation: the target and the codegen flags, each as `--name=value`, so
/// the same module key results. Refused ("invalid", naming the word): an
/// input file, -o, an options file, --input-as-string, --apply-controls,
/// --query-controls or any other option that names a file, and options
/// ptxas does not list. Options that do not change code (diagnostics) are
/// dropped.
Result<std::vector<std::string>> capture_ptxas_args(const std::vector<std::string>& args);

/// Parses codegen flags given as one string ("-O2 --fmad=false") for
/// `ciq-cache put --flags`; inputs or -o in it are an error.
Result<std::map<std::string, std::string>> parse_codegen_flags(const std::string& flags);

} // namespace ciq::cache
