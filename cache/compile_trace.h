// The compile trace (CIQ_TRACE=<dir>), format ciq-trace/1: one JSON record
// per module ciq-ptxas compiled (<dir>/*.json) and per translation unit
// ciq-cicc compiled (<dir>/units/*.json, "kind": "unit"), and per memoised
// tuning build of nvcc (<dir>/steps/*.json, "kind": "steps"), saying which keys
// and kernels they saw, which controls they applied (or why not), and what
// the compiler reported. The format's one owner, below its writers
// (wrapper/trace.cpp, which also names and places the files) and its reader
// (tuner/objectives: the tuner's view of a build): the members, their order
// and the version check are here.
#pragma once

#include "utils/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ciq::cache {

inline constexpr const char* k_trace_format = "ciq-trace/1";

/// What ptxas -v says about a kernel.
struct KernelResources {
  long registers = -1;
  long spill_stores = 0;
  long spill_loads = 0;
  long stack = 0;
  long shared = 0;   // bytes smem
  long barriers = 0;
  double compile_ms = -1;
};

struct TraceKernel {
  std::string name;
  std::string key; // hex
  long block_threads = 0; // from the PTX's .reqntid/.maxntid; 0 = not declared
  KernelResources resources;
  std::string code;  // hex XXH3-128 of its .text section in the output (utils/elf.h); "" if none
};

/// What ciq-ptxas did for one module.
struct TraceRecord {
  std::string input;         // PTX path, or "<string>"
  std::string output;        // -o value
  std::string target;
  std::string ptxas_path;
  std::string ptxas_version;
  std::string ptxas_identity;  // hex digest of its --version text, as cache keys hold it (cache::identity_digest)
  bool accepts_controls_file = false; // this ptxas takes --apply-controls (ACF files)
  std::string flags;
  std::vector<std::string> args;  // ptxas' arguments as given, without the input and -o: how to compile it again
  std::string ptx_copy;      // with CIQ_TRACE_PTX=1: "ptx/<module_key>.ptx" under the trace directory; else ""
  std::string module_key;    // hex
  std::vector<TraceKernel> kernels;
  std::string controls_source;  // "cache", "pack", "remote", "controls-file" or "" (none)
  std::string controls;         // summary of what was applied
  bool controls_applied = false;
  std::string controls_error;   // why controls were not applied, if they were meant to be
  std::string code_digest;      // hex digest of the output's .text sections ("" if not a cubin)
  std::vector<std::string> warnings; // ptxas' warnings, normalised (compiler_warnings)
  int exit_status = 0;
  double seconds = 0;           // wall time of the ptxas run that produced the output
};

/// What ciq-cicc did for one translation unit at the NVVM stage.
struct UnitTraceRecord {
  std::string unit;          // the .cu as nvcc was given it
  std::string source_path;   // its absolute path
  std::string target;        // compute_90a
  std::string key;           // hex unit key
  std::string nvcc_version;  // 13.0.88
  std::string output;        // the PTX cicc wrote
  std::vector<std::string> kernels; // the PTX's kernels, for the tuner to find a kernel's unit
  std::string controls_source, controls, controls_error;
  std::vector<std::string> warnings; // cicc's warnings, normalised (compiler_warnings)
  bool controls_applied = false;
  int exit_status = 0;
  double seconds = 0;
};

/// What a memoised tuning build of nvcc did (wrapper/step_memo.h): how many
/// of its steps ran and how many the memo answered, and for which tools.
struct StepsRecord {
  int steps_run = 0;
  int steps_reused = 0;
  std::vector<std::string> reused; // the tools whose steps the memo answered
};

/// A record as its file holds it: one line of JSON and a newline. Bytes
/// that are not UTF-8 (a path, a kernel name) become U+FFFD; durations are
/// rounded to the microsecond.
std::string trace_record_text(const TraceRecord& record);
std::string unit_record_text(const UnitTraceRecord& record);
std::string steps_record_text(const StepsRecord& record);

/// A record read back. Fails when the text is not JSON, not of format
/// ciq-trace/1, or (units, steps) not a record of that kind; members
/// missing are empty.
Result<TraceRecord> parse_trace_record(std::string_view text);
Result<UnitTraceRecord> parse_unit_record(std::string_view text);
Result<StepsRecord> parse_steps_record(std::string_view text);

} // namespace ciq::cache
