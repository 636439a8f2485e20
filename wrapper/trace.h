// Trace records for the tuner (CIQ_TRACE=<dir>): one JSON file per module
// ciq-ptxas compiled, written atomically, saying which keys and kernels it
// saw, which controls it applied (or why not), and what ptxas -v reported.
#pragma once

#include "wrapper/resources.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::wrapper {

struct TraceKernel {
  std::string name;
  std::string key; // hex
  long block_threads = 0; // from the PTX's .reqntid/.maxntid; 0 = not declared
  KernelResources resources;
  std::string code;  // hex XXH3-128 of its .text section in the output (utils/elf.h); "" if none
};

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

/// Writes `record` as <dir>/<time>-<pid>-<random>-<n>.json (utils/safe_open.h,
/// new_process_tag), never replacing a file; failures are logged only.
void write_trace(const std::string& dir, const TraceRecord& record);
/// Whether `dir` is (or can be made) a directory this process can write.
bool trace_dir_usable(const std::string& dir);

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

/// Writes `record` as <dir>/units/<time>-<pid>-<random>-<n>.json (apart from the
/// ptxas records, which readers of the trace take from <dir> itself).
void write_unit_trace(const std::string& dir, const UnitTraceRecord& record);

} // namespace ciq::wrapper
