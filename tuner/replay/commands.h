// ciq-replay's modes, each one entry point that returns the exit status
// (main maps nothing else): `plan` (no GPU), `run` (one candidate, once)
// and `serve` (a resident benchmark for ciq-tuner --bench-server).
#pragma once

#include "tuner/formats/capture.h"
#include "tuner/replay/options.h"
#include "utils/result.h"

#include <cstdio>
#include <string>
#include <vector>

namespace ciq::replay {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_wrong_answer = 1;  // run: the candidate's outputs differ from the reference's
inline constexpr int k_exit_error = 2;         // usage, input, no driver, a CUDA failure
inline constexpr int k_exit_unfaithful = 3;    // the reference's replay differs from the program's launch (bitwise)

/// The captures named on the command line: each path is a capture's
/// directory (it holds launch.json) or a CIQ_CAPTURE directory (every
/// capture under it, in name order; launches it cannot read are warned
/// about on stderr). Fails ("parse", "io") naming the path and the member.
Result<std::vector<formats::Capture>> read_captures(const std::vector<std::string>& paths);

int run_plan(const Options& options);
int run_once(const Options& options);
/// Answers requests from `in` on `out` until the end of input.
int run_server(const Options& options, std::FILE* in, std::FILE* out);

} // namespace ciq::replay
