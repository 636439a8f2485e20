// ciq-replay's command line and the words of a `serve` request, read by a
// small hand parser (no LLVM: ciq-replay has a dozen options, and it must
// stay a dynamically linked program that can dlopen the driver, see
// CMakeLists.txt), and the --bench-server wire format's server end
// (tuner/measure/bench_protocol.h is the tuner's end; README, "Resident
// benchmarks").
#pragma once

#include "tuner/replay/compare.h"
#include "utils/result.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace ciq::replay {

enum class Mode { help, plan, run, serve };

inline constexpr int k_default_samples = 30;
inline constexpr int k_default_warmup = 3;
inline constexpr double k_default_max_seconds = 10;

struct Options {
  Mode mode = Mode::help;
  std::string cubin;      // run: the candidate's code
  std::string reference;  // run, serve: the default code, whose outputs are the right ones
  int samples = k_default_samples;
  int warmup = k_default_warmup;
  double max_seconds = k_default_max_seconds;  // per capture and request, a bound on the samples' time
  CompareMode compare;
  int device = 0;                      // ordinal among the devices this process sees
  std::vector<std::string> captures;   // capture directories, or CIQ_CAPTURE roots
};

/// Parses argv after the program name: MODE, then options (`--name VALUE`
/// or `--name=VALUE`) and captures in any order. `--help`/`-h` anywhere, or
/// no words, is Mode::help. Fails ("usage") naming the word and the fix.
Result<Options> parse_command_line(const std::vector<std::string>& args);

/// One request of `serve`: `--cubin FILE [--samples N] [--check]`.
struct Request {
  std::string cubin;
  std::optional<int> samples;  // else the server's --samples
  bool check = false;          // compare outputs with the reference instead of timing
};

/// Fails ("usage") for an unknown word or a missing --cubin, naming it.
Result<Request> parse_request(const std::vector<std::string>& words);

/// A request as it came over the wire: `ciq-request: ID`, words, an empty
/// line. `id` is absent for a request without the first line (a tuner
/// before request ids); words read before the end of input without the
/// empty line still make a request.
struct WireRequest {
  std::optional<std::string> id;
  std::vector<std::string> words;
};

/// The next request from `in`; std::nullopt at the end of input.
std::optional<WireRequest> read_wire_request(std::FILE* in);

/// The answer's text: `lines` (each escaped by printable(): one line, no
/// terminal control, whatever a capture's names hold), then `ciq-status:
/// ID STATUS` (without ID for a request that had none).
std::string format_answer(const std::vector<std::string>& lines, int status, const std::optional<std::string>& id);

} // namespace ciq::replay
