// Kernel captures: one real launch of a kernel, recorded inside the user's
// own program by libciq-inject (CIQ_CAPTURE=<dir>), so that the kernel can be
// re-run alone (ciq-replay) with other code for the same PTX. This header is
// the format's documentation and its one reader; the writer is
// tuner/inject/capture_writer.h (the texts) and capture.h (the files).
//
// Directory layout (<dir> as CIQ_CAPTURE names it):
//
//   <dir>/index-<tag>.jsonl         written once per process at exit (like
//                                   the kernel trace): what was captured,
//                                   what was not and why
//   <dir>/<tag>-<n>/launch.json     one captured launch (n = 0, 1, ...)
//   <dir>/<tag>-<n>/mem-<i>.bin     allocation i's bytes just before the
//                                   launch, exactly `size` bytes
//   <dir>/<tag>-<n>/compile.json    added by `ciq-tuner profile` (not by the
//                                   library): how the kernel's module was
//                                   compiled, for ciq-replay's candidates
//   <dir>/<tag>-<n>/module.ptx      ... and that module's PTX
//
// <tag> is "<pid>-<16 hex digits>", random, drawn once per process
// (utils/safe_open.h, new_process_tag): processes in different PID
// namespaces (containers) can share a pid and a directory, and none
// replaces another's files. A name found taken is never overwritten: the
// index then becomes index-<tag>-<k>.jsonl, a capture the next <n>.
// Readers take any index-*.jsonl and any directory holding a launch.json,
// so captures of earlier versions (index-<pid>.jsonl, <pid>-<n>) still read.
//
// launch.json (one JSON object):
//   {"ciq_capture": 1,
//    "kernel": "mangled name", "pid": N, "exe": "...",
//    "device": ordinal, "device_name": "NVIDIA H100 80GB HBM3",
//    "compute_capability": [9, 0],
//    "grid": [x,y,z], "block": [x,y,z], "dynamic_smem": bytes,
//    "launch_api": "cuLaunchKernel" | "cuLaunchKernelEx" | ...,
//    "code_xxh128": "hex" | "",  // the kernel's machine code in the module
//                            // the launch ran (utils/elf.h's hash of its
//                            // .text section, as ciq-ptxas' trace names
//                            // it); "" when unknown (a runtime launch,
//                            // a driver without cuFuncGetModule)
//    "params": [{"offset": o, "size": s}, ...],   // cuFuncGetParamInfo, in order
//    "param_bytes": "hex",   // the parameter buffer: every parameter's value at
//                            // its offset; length = last offset + size
//    "pointers": [{"param": i, "allocation": a, "offset": o}, ...],
//                            // parameter i (8 bytes) held allocations[a].base + o
//    "allocations": [{"base": "0x...", "size": bytes, "file": "mem-0.bin",
//                     "before_xxh128": "hex", "after_xxh128": "hex"}, ...],
//                            // every device allocation (cuMemGetAddressRange)
//                            // a pointer parameter points into, whole; the
//                            // digests (utils/hash.h XXH3-128) of its bytes
//                            // before and after the program's own launch
//    "config_launches": N}   // how many launches of this kernel with this
//                            // grid/block/dynamic_smem the process made
//                            // (filled in at exit; 1 if it ended first)
//
// compile.json (written by `ciq-tuner profile` from the build trace):
//   {"ptx": "module.ptx", "ptxas": "/usr/local/cuda/bin/ptxas",
//    "ptxas_version": "13.0.88", "ptxas_release": "13.0",
//    "ptxas_identity": "hex",
//    "target": "sm_90a", "args": ["-arch=sm_90a", "-O3", ...],
//    "module_key": "hex"}
//   ptx: the module's PTX, a file in the capture's directory (a relative
//   name; the reader makes it absolute); args: the ptxas arguments of the
//   program's build other than the input and -o. ptxas: the path of the
//   real ptxas the program's build ran, and its identity: its version, its
//   release and ptxas_identity, the digest of its --version text that is
//   part of every cache key (cache::identity_digest; members absent in
//   compile.json of older ciq). The path is a record, never a program to
//   run: a capture is a file anyone may have written. `ciq-tuner run
//   --capture` compiles that PTX with the ptxas of the user's own
//   configuration (cache::find_user_ptxas: CIQ_REAL_PTXAS, PATH, the
//   toolkit) through ciq-ptxas, after comparing its identity with the one
//   recorded here (another ptxas makes other keys: the program's build
//   would never look up what the tuner found), and writes reference.cubin
//   into the capture's directory: so it uses only a capture in the user's
//   own directory, closed to others, whose PTX is its own regular file.
//
// index-<tag>.jsonl: a first line {"ciq_capture_index": 1, "pid": N,
// "exe": "...", "status": "ok" | why nothing could be captured
// ("bad-setting", "no-driver", "no-cupti", "cupti-version", "cupti-error",
// "interrupted"), "reason": "...", "untracked_launches": N (launches of
// configurations past the library's bound on remembered ones, 65536),
// "graph_launches": N (cuGraphLaunch calls: the kernels inside graphs are
// not seen)}, then one line per kernel and launch configuration the
// library saw and was asked to capture:
//   {"kernel": "mangled", "grid": [..], "block": [..], "dynamic_smem": b,
//    "launches": N, "captured": "<tag>-<n>" | "", "refused": "why not" | ""}
// A refusal names the reason a person can act on: a pointer inside a
// structure parameter, managed or host memory, a launch during stream
// capture (a CUDA graph), a cooperative launch, a tensor-map parameter, a
// launch over the size cap (CIQ_CAPTURE_MAX_BYTES), a CUDA call that failed.
//
// Readers ignore members they do not know; "ciq_capture" changes only when
// a member changes meaning.
#pragma once

#include "utils/result.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ciq::formats {

struct CaptureParam {
  std::uint64_t offset = 0, size = 0;
};

/// Parameter `param` held allocations[allocation].base + offset.
struct CapturePointer {
  std::uint32_t param = 0, allocation = 0;
  std::uint64_t offset = 0;
};

struct CaptureAllocation {
  std::uint64_t base = 0, size = 0;
  std::string file;  // absolute path of its bytes before the launch
  std::string before_xxh128, after_xxh128;
};

/// How the kernel's module was compiled (compile.json, written by
/// `ciq-tuner profile` from the build trace): the real ptxas's arguments
/// that matter for the cache key, so that ciq-ptxas recompiles module.ptx
/// under the same key the program's build used.
struct CaptureCompile {
  std::string ptx;                // absolute path of module.ptx
  std::string ptxas;              // the path of the real ptxas the program's build ran: shown, never run
  std::string ptxas_version;      // its version, 13.0.88 ("" when not recorded)
  std::string ptxas_release;      // its release, 13.0 ("" when not recorded)
  std::string ptxas_identity;     // cache::identity_digest of it, 32 hex digits ("" when not recorded)
  std::string target;             // sm_90a
  std::vector<std::string> args;  // ptxas arguments other than input and -o
  std::string module_key;         // hex, as the build trace named it
};

struct Capture {
  std::string dir;  // absolute path of <dir>/<tag>-<n>
  std::string kernel;
  std::int64_t pid = 0;
  std::string exe;
  int device = 0;
  std::string device_name;
  std::array<int, 2> compute_capability{0, 0};
  std::array<std::uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  std::uint32_t dynamic_smem = 0;
  std::string launch_api;
  std::string code_xxh128;  // "" when unknown
  std::vector<CaptureParam> params;
  std::vector<std::uint8_t> param_bytes;
  std::vector<CapturePointer> pointers;
  std::vector<CaptureAllocation> allocations;
  std::uint64_t config_launches = 1;
  bool has_compile = false;
  CaptureCompile compile;

  std::uint64_t bytes() const;  // the allocations' total size
};

/// One line of an index file: a kernel and launch configuration seen.
struct CaptureIndexEntry {
  std::string kernel;
  std::array<std::uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  std::uint32_t dynamic_smem = 0;
  std::uint64_t launches = 0;
  std::string captured;  // "<tag>-<n>" or ""
  std::string refused;   // why not, or ""
};

struct CaptureIndex {
  std::string file;  // the reader's: where it was read from
  std::int64_t pid = 0;
  std::string exe, status, reason;
  std::uint64_t untracked_launches = 0;  // launches past the table's bound on configurations
  std::uint64_t graph_launches = 0;      // cuGraphLaunch calls: their kernels are not captured
  std::vector<CaptureIndexEntry> entries;
};

/// Reads <dir>/launch.json (and compile.json when present), checking that
/// it is well formed: parameters inside param_bytes, pointers naming a
/// parameter of 8 bytes (each parameter once) and an offset inside their
/// allocation, digests of 32 hex digits or "", every allocation's file a
/// regular file (not a link) with exactly `size` bytes (not read here).
/// Every file is opened once through utils/safe_open.h's open_input (a
/// capture is input another user may have written: a link, FIFO or device
/// is refused, never followed or waited on). Linear in the size of
/// launch.json. Errors name the file and the member.
Result<Capture> read_capture(const std::string& dir);

/// Reads allocation `a`'s bytes (its mem-<i>.bin) for use: opens the file
/// once (open_input: a regular file, no link, exactly `a.size` bytes),
/// hands its bytes to `sink` in order, in pieces of at most `chunk` bytes,
/// and hashes them as they pass; at the end the digest must be the one the
/// capture records for the bytes before the launch (before_xxh128; none to
/// check when it records none). Everything is read through that one
/// descriptor, once. Errors: open_input's (the file named), "io", the
/// sink's own, and "corrupt" ("FILE does not hold the bytes the capture
/// recorded: its digest is X, launch.json records Y"). On any error the
/// bytes the sink saw must not be used.
using ImageSink = std::function<Result<void>(std::uint64_t offset, const std::uint8_t* bytes, std::size_t size)>;
Result<void> read_capture_image(const CaptureAllocation& a, const ImageSink& sink,
                                std::size_t chunk = std::size_t(64) << 20);

/// Reads every index-*.jsonl and every captured launch under `root`
/// (CIQ_CAPTURE's directory). Launches whose launch.json cannot be read
/// are reported in `problems`, not fatal.
struct CaptureSet {
  std::vector<CaptureIndex> indexes;
  std::vector<Capture> captures;
  std::vector<std::string> problems;  // "path: why"
};
Result<CaptureSet> read_capture_set(const std::string& root);

/// Writes compile.json into a capture's directory (used by ciq-tuner
/// profile); atomically.
Result<void> write_capture_compile(const std::string& dir, const CaptureCompile& compile);

} // namespace ciq::formats
