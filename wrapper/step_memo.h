// Tuning builds that rerun only what a candidate changes. In tuning mode
// (the tuner sets CIQ_MEMO_DIR next to CIQ_CONTROLS/CIQ_TRACE) ciq-nvcc
// runs nvcc's steps itself, from `nvcc --dryrun` (wrapper/nvcc_steps.h), in
// a private temporary directory, and answers three kinds of step from a
// content-keyed memo instead of running them:
//   - cudafe++ and cicc: pure functions of their command line and input
//     files (the preprocessed source, the module id), keyed by both;
//   - the host compile of the .cudafe1.cpp: keyed by its command line and
//     every temporary it can include, except what ptxas and fatbinary wrote,
//     which only reaches the object as the bytes of its fatbinary section
//     (.nv_fatbin; __nv_relfatbin with -rdc),
//     and except its own path (-o). A reused object gets this build's
//     fatbinary in that section (objcopy --update-section) and is checked
//     to hold exactly those bytes; it is stored only after checking that the
//     section of the compiled object is exactly its fatbin.c's bytes. The
//     linked program is byte-identical to the one the full steps produce; a
//     -c object differs only in the order of its symbol names, which objcopy
//     rewrites (test/lit/nvcc-memo.test). With -g the host compile runs
//     every time: its debug information records the fatbinary's length.
// Preprocessing (which reads the user's headers), ptxas, fatbinary, nvlink
// and the link always run. Nothing in Debian does this: ccache and sccache
// memoise whole nvcc calls, which every candidate changes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

struct MemoOutcome {
  int steps_run = 0;
  int steps_reused = 0;
  std::vector<std::string> reused; // the tools whose steps were answered from the memo
};

/// True when `nvcc_args` (without argv[0]) ask for something the step-wise
/// run would not reproduce: --keep, --dryrun, --time, --run, -v, ...
bool memo_unsuitable(const std::vector<std::string>& nvcc_args);

/// Runs `nvcc_argv` (argv[0]: the real nvcc) step by step with the memo in
/// `memo_dir`; on success every step succeeded. std::nullopt: it could not,
/// or a step failed; the caller then
/// runs nvcc itself with the same arguments, so that any problem, and every
/// diagnostic, is nvcc's own.
std::optional<MemoOutcome> run_nvcc_memoised(const std::vector<std::string>& nvcc_argv, const std::string& memo_dir);

} // namespace ciq::wrapper
