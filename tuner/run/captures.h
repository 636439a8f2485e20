// Kernel captures on the tuner's side: a profile run that also captures
// kernels (libciq-inject's CIQ_CAPTURE; the format is
// tuner/formats/capture.h) is completed here with how each captured
// kernel's module was compiled, taken from the build trace, so that
// ciq-replay can time other code for it; and `ciq-tuner run --capture DIR`
// becomes an ordinary tuning run whose build is one ptxas compile of that
// module and whose benchmark is a resident ciq-replay.
#pragma once

#include "tuner/objectives/objectives.h"
#include "tuner/run/options.h"
#include "tuner/formats/capture.h"
#include "utils/result.h"

#include <string>
#include <vector>

namespace ciq::tuner {

/// What became of the captures of one profile run, for the terminal.
struct CaptureOutcome {
  std::vector<std::string> ready;    // capture directories with compile.json
  std::vector<std::string> refused;  // "KERNEL: why", from the index and from here
  std::size_t processes = 0;         // processes that wrote a capture index
};

/// For every capture under `captures_dir`: the traced compile of the
/// module holding its kernel (a successful ptxas run with an output, a
/// target of the capture's GPU, and its PTX kept in one of `build_dirs`:
/// the build ran with CIQ_TRACE_PTX=1), copied in as module.ptx with
/// compile.json. A kernel no traced module holds (a library's, or built
/// without ciq) or held by modules of different keys is refused with that
/// reason.
Result<CaptureOutcome> attach_compiles(const std::string& captures_dir, const std::vector<std::string>& build_dirs);

/// Says on stderr which kernels were captured (and where) and which not
/// and why; `asked`: the kernels that were to be captured (','); `campaign`:
/// a campaign's capture (whose kernels not captured are tuned by program runs).
void say_captures(const CaptureOutcome& outcome, const std::string& asked, bool campaign);

/// The steps of a tuning run on one capture directory (`run --capture`):
/// the build compiles module.ptx with ciq-ptxas (so that the candidate's
/// controls apply and the trace names the program's keys), the benchmark
/// server is ciq-replay with the reference code (the module compiled
/// without controls) and the run's --compare mode.
struct ReplaySteps {
  std::string build;                     // ciq-ptxas REAL ARGS module.ptx -o {workdir}/module.cubin (a command line)
  std::vector<std::string> reference;    // argv: REAL ARGS module.ptx -o REFERENCE (run once, before the search)
  std::string bench_server;              // ciq-replay serve --reference REFERENCE [--compare M] CAPTURE...
  std::string bench, check, metric;      // the requests' words and what they print
  std::string kernel;                    // the captured kernel: the run's --kernels
};

/// The captures `--capture DIR` names: DIR itself when it holds a
/// launch.json, else every capture under it of the kernel matching
/// `kernels` (a glob; one kernel only). Each must have its compile.json.
/// Launches of one name that ran several modules' code are different
/// kernels: only the captures of the module launched most are kept (said
/// on stderr). Errors say what DIR holds instead.
Result<std::vector<formats::Capture>> captures_for_run(const std::string& dir, const std::string& kernels);

/// `ptxas`: the real ptxas of the user's configuration
/// (cache::find_user_ptxas), never the one a capture names; `tool_dir`:
/// where ciq-ptxas and ciq-replay are (beside ciq-tuner).
ReplaySteps replay_steps(const std::vector<formats::Capture>& captures, const std::string& ptxas,
                         const std::string& reference_cubin, const std::string& compare, const std::string& tool_dir);

/// `ciq-tuner run --capture DIR [--compare MODE]`: fills `given`'s build,
/// benchmark server, requests, metric (unless an objective is given) and
/// kernels from the captures (replay_steps), after compiling the reference
/// code into the first capture's directory (reference.cubin, compiled
/// afresh every time: one that came with a copied capture is not trusted).
/// The ptxas is the user's own (CIQ_REAL_PTXAS, PATH, the toolkit),
/// compared with the identity compile.json records; compile.json's "args"
/// pass only as the code generation options they hold
/// (cache::capture_ptxas_args). Fails when `given` already has a --build,
/// --bench, --check or --bench-server (the capture replaces them), when a
/// capture's path holds a placeholder brace, its args name a file or an
/// option ptxas does not list, no ptxas is found or it is not the one that
/// compiled the captured module (both named), or the reference does not
/// compile (ptxas' message).
Result<void> use_capture(GivenOptions& given, const std::string& dir, const std::string& compare);

} // namespace ciq::tuner
