// Reading a cicc command line (the NVVM stage: one translation unit's
// preprocessed device code to PTX, as nvcc runs it through --cicc-prefix):
// which input, which virtual target, which flags decide the code, and the
// key of the unit. cicc has no documented interface; what is known here was
// read off `nvcc --dryrun` of nvcc 13.0 (docs/nvvm-stage.md). Anything this
// scanner does not understand makes it fail, and the wrapper then runs cicc
// unchanged.
#pragma once

#include "utils/hash.h"
#include "utils/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ciq::cache {

struct CiccCommand {
  std::size_t input_index = 0; // position of the input in the scanned arguments
  std::string input;           // the preprocessed device source (.cpp1.ii)
  std::string output;          // -o value ("" when absent)
  std::string unit;            // --orig_src_file_name: the .cu as nvcc was given it
  std::string source_path;     // --orig_src_path_name
  std::string target;          // -arch value, e.g. compute_90a
  /// Every argument that is not a file name (nor the value of an option
  /// naming a file), in order: what, with the input, decides cicc's output.
  std::vector<std::string> flags;

  std::string canonical_flags() const; // flags joined by single blanks
};

/// Scans cicc's arguments (without argv[0]); fails unless there is exactly
/// one input and a target.
Result<CiccCommand> scan_cicc_args(const std::vector<std::string>& args);

/// cicc's input without what only says where the source lives: the
/// preprocessor's line markers (`# 12 "/abs/path/k.cu"`), so that a unit
/// keeps its key in another checkout or build directory.
std::string normalise_cicc_input(std::string_view text);

/// Key of one translation unit at the NVVM stage: the normalised input, the
/// target, the flags and the toolkit's identity (nvcc --version text).
Hash128 unit_key(std::string_view normalised_input, const CiccCommand& command, std::string_view identity);

/// `args` with the rendered NVVM-stage options applied: each replaces any
/// argument of the same option already there (cicc refuses an option given
/// twice: "-ftz defined more than once"), in front of the input.
std::vector<std::string> apply_cicc_options(const std::vector<std::string>& args, const CiccCommand& command,
                                            const std::vector<std::string>& rendered);

} // namespace ciq::cache
