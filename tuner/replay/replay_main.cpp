// ciq-replay: re-runs a captured kernel launch (tuner/formats/capture.h)
// with candidate code, times it and checks its outputs. Options are read by
// a small hand parser (options.h), not LLVM's cl::opt: ciq-replay has a few
// options and links no LLVM. It loads the CUDA driver at run time
// (driver.h) and never links libcuda.
//
// The statistic is the median of the timed launches: robust to the
// occasional launch that was preempted or ran while the clocks changed,
// which would pull a mean.
#include "tuner/formats/compare_mode.h"
#include "tuner/replay/commands.h"
#include "tuner/replay/options.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

const char* const k_help = R"(ciq-replay: re-run a captured kernel launch with other code, time it, check its outputs

A capture is one real launch of a kernel recorded inside your program by
libciq-inject (CIQ_CAPTURE=DIR): the kernel's name, grid, block, dynamic
shared memory, parameter buffer, and every device allocation its pointer
parameters point into (mem-<i>.bin). ciq-replay loads those allocations
onto the GPU, points the parameters at its own copies, and launches the
kernel from a cubin you give (compiled from the same module's PTX with
other controls): no rebuild and no run of your program.

USAGE
  ciq-replay plan CAPTURE...
  ciq-replay run --cubin FILE [--reference FILE] [options] CAPTURE...
  ciq-replay serve [--reference FILE] [options] CAPTURE...

CAPTURE is a capture's directory (<pid>-<n>, holding launch.json) or the
CIQ_CAPTURE directory itself (every capture in it).

MODES
  plan   Print each capture's relocation plan without a GPU: the launch, each
         parameter (a pointer to allocation A + offset, or bytes kept as
         they are), each allocation's size and file, and the device memory
         a replay takes (every allocation twice).
  run    Replay once with --cubin: prints one line per capture (its median
         time, samples, weight) and `time_ms: X`. With --reference, first
         replays the reference cubin and compares the candidate's outputs
         with it: `wrong answer: ...` and exit 1 when they differ.
         Without it, says whether the outputs match the program's own launch.
  serve  A resident benchmark for `ciq-tuner --bench-server`: captures stay
         loaded on the GPU; each request (`ciq-request: ID`, words one per
         line, an empty line) is `--cubin FILE [--samples N] [--check]`, and
         the answer is its output then `ciq-status: ID STATUS`. A timing
         request prints `time_ms: X`; a --check request compares with the
         reference (status 1 and `wrong answer: ...` when they differ).
         Cubins are cached by path, size and mtime (the last 4 stay loaded).

OPTIONS
  --cubin FILE       run: the candidate's code
  --reference FILE   the default code: its replay's outputs are the right ones.
                     It is replayed once at start, and its outputs must match
                     the digests of the program's own launch: otherwise the
                     capture is not faithful (results depend on timing or on
                     memory outside the captured allocations), which is fatal
                     (exit 3) with a bitwise comparison and a warning otherwise
  --compare MODE     how outputs must match the reference's:
                       bitwise        every byte equal (default)
                       close          floating-point elements within their
                                      type's default tolerance:
{close-defaults}
                       rtol=R,atol=A  floating-point elements within
                                      |got - expected| <= A + R * |expected|
                     An allocation is floating-point when the kernel's C++
                     signature says so of every pointer parameter into it
                     (float*, double*, __half*, __nv_bfloat16*, ...); all
                     others (integers, bool, Triton kernels' unknown types)
                     are compared bitwise. A NaN agrees with a NaN, an
                     infinity only with the same infinity. The old TYPE:TOL
                     form is refused with the words to use instead.
  --samples N        timed launches per capture (default 30)
  --max-time S       stop sampling a capture after S seconds (default 10)
  --warmup N         untimed launches first (default 3)
  --device N         the GPU, by ordinal as this process sees it (after
                     CUDA_VISIBLE_DEVICES; default 0)

TIMING
  Each sample restores the captured inputs, flushes the L2 cache (writing a
  buffer twice its size), and times the launch alone with CUDA events. The
  statistic is the MEDIAN: robust to the occasional launch that was
  preempted or ran while the clocks changed, which would pull a mean. Over
  several captures, `time_ms` is the launch-weighted mean of their medians,
  each weighted by how many launches of that configuration the program made
  (config_launches): the average launch as the program makes them, so two
  candidates' ratio is the ratio of the program's time in these kernels.

EXIT STATUS
  0  success            1  wrong answer (run --reference)
  2  usage or input error, no CUDA driver, a CUDA failure
  3  not faithful: the reference's replay differs from the program's launch
     (with --compare bitwise)

ENVIRONMENT
  CIQ_CUDA_LIBRARY   the driver library to load (default libcuda.so.1)
)";

} // namespace

int main(int argc, char** argv) {
  using namespace ciq::replay;
  auto options = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  if (!options) {
    std::fprintf(stderr, "ciq-replay: error: %s\n", options.error().message.c_str());
    return k_exit_error;
  }
  switch (options->mode) {
  case Mode::help: {
    // The defaults of `close` come from the table the comparison uses, not
    // from a copy here.
    std::string help = k_help;
    std::string defaults;
    for (const auto& line : ciq::formats::default_tolerance_lines())
      defaults += (defaults.empty() ? "" : "\n") + std::string(38, ' ') + line;
    const std::string marker = "{close-defaults}";
    help.replace(help.find(marker), marker.size(), defaults);
    std::fputs(help.c_str(), stdout);
    return k_exit_ok;
  }
  case Mode::plan: return run_plan(*options);
  case Mode::run: return run_once(*options);
  case Mode::serve: return run_server(*options, stdin, stdout);
  }
  return k_exit_error;
}
