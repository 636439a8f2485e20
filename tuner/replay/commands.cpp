// The modes of ciq-replay (commands.h). Results go to stdout in lines a
// program can read (`time_ms: X`, `wrong answer: ...`); progress and
// errors to stderr as `ciq-replay: ...`. A capture is text anyone may have
// written (its folder and kernel names, its files' names): everything
// printed goes through printable(), so a newline in a folder name cannot
// forge a `time_ms:` line and no terminal escape reaches the terminal.
#include "tuner/replay/commands.h"

#include "utils/text.h"

#include "tuner/replay/plan.h"
#include "tuner/replay/replayer.h"
#include "tuner/formats/capture_lines.h"
#include "utils/files.h"

#include <algorithm>
#include <cinttypes>
#include <memory>

namespace ciq::replay {

namespace {

void error_line(const std::string& message) { std::fprintf(stderr, "ciq-replay: error: %s\n", printable(message).c_str()); }
void warning_line(const std::string& message) { std::fprintf(stderr, "ciq-replay: warning: %s\n", printable(message).c_str()); }
/// One result line on stdout.
void result_line(const std::string& line) { std::printf("%s\n", printable(line).c_str()); }

std::string ms_text(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", ms);
  return buf;
}

std::string faithfulness_message(std::uint32_t allocation) {
  return "not faithful: allocation " + std::to_string(allocation) +
         " after the reference replay differs from the program's own launch (a kernel whose results depend on timing "
         "or on memory outside the captured allocations)";
}

/// The reference's outputs, one set per capture, checked against the
/// digests of the program's own launch. Fails with the exit status to
/// return: k_exit_unfaithful for a bitwise comparison of a capture the
/// replay does not reproduce (a tolerance only warns: it compares with the
/// reference's replay anyway), k_exit_error for anything else.
struct ReferenceOutputs {
  std::vector<std::vector<HostBytes>> per_capture;
};

int replay_reference(Replayer& replayer, const Options& options, ReferenceOutputs& out) {
  auto module = replayer.load_module(options.reference, /*pinned=*/true);
  if (!module) {
    error_line("--reference " + module.error().message);
    return k_exit_error;
  }
  for (std::size_t i = 0; i < replayer.captures().size(); ++i) {
    const auto& capture = replayer.captures()[i];
    std::vector<HostBytes> outputs;
    if (auto replayed = replayer.outputs(i, **module, outputs); !replayed) {
      error_line("replaying " + capture.dir + " with the reference " + options.reference + ": " + replayed.error().message);
      return k_exit_error;
    }
    for (auto allocation : unfaithful_allocations(capture, outputs)) {
      std::string message = capture.dir + ": " + faithfulness_message(allocation);
      if (options.compare.kind == CompareKind::bitwise) {
        error_line(message + "; a bitwise comparison cannot judge candidates by it (tune this kernel by whole-program runs, "
                             "or compare floating-point outputs within a tolerance: --compare close)");
        return k_exit_unfaithful;
      }
      warning_line(message + "; --compare " + compare_mode_text(options.compare) +
                   " compares candidates with the reference's replay");
    }
    out.per_capture.push_back(std::move(outputs));
  }
  return k_exit_ok;
}

/// Where a candidate's outputs are copied back, one set per capture, kept
/// from one check to the next (Replayer::outputs reuses them).
using OutputBuffers = std::vector<std::vector<HostBytes>>;

/// Compares every capture's outputs under `module` with the reference's:
/// the wrong-answer line, "" when all agree; fails on a CUDA error.
Result<std::string> check_outputs(Replayer& replayer, Replayer::Module& module, const ReferenceOutputs& reference,
                                  const CompareMode& mode, OutputBuffers& buffers) {
  buffers.resize(replayer.captures().size());
  for (std::size_t i = 0; i < replayer.captures().size(); ++i) {
    if (auto replayed = replayer.outputs(i, module, buffers[i]); !replayed) return replayed.error();
    const auto& capture = replayer.captures()[i];
    if (auto d = first_difference(capture, mode, reference.per_capture[i], buffers[i]))
      return wrong_answer_message(mode, *d) + " (capture " + printable(capture.dir) + ")";
  }
  return std::string();
}

/// Times every capture; the per-capture lines, then `time_ms: X`.
Result<std::vector<std::string>> time_all(Replayer& replayer, Replayer::Module& module, const Options& options, int samples) {
  std::vector<std::string> lines;
  std::vector<double> medians;
  for (std::size_t i = 0; i < replayer.captures().size(); ++i) {
    const auto& capture = replayer.captures()[i];
    auto t = replayer.time(i, module, options.warmup, samples, options.max_seconds);
    if (!t) return make_error(t.error().code, capture.dir + ": " + t.error().message);
    auto [lo, hi] = std::minmax_element(t->samples_ms.begin(), t->samples_ms.end());
    lines.push_back("capture " + printable(capture.dir) + ": median " + ms_text(t->median_ms) + " ms over " +
                    std::to_string(t->samples_ms.size()) + " samples (min " + ms_text(*lo) + ", max " + ms_text(*hi) +
                    "), weight " + std::to_string(capture_weight(capture)) + " launch(es)");
    medians.push_back(t->median_ms);
  }
  auto total = weighted_total_ms(replayer.captures(), medians);
  if (!total) return total.error();
  lines.push_back("time_ms: " + ms_text(*total));
  return lines;
}

Result<std::unique_ptr<Replayer>> open_replayer(const Options& options) {
  auto captures = read_captures(options.captures);
  if (!captures) return captures.error();
  // The files named on the command line, before the driver is needed (and
  // on a machine without one): a missing one is said as such.
  for (const auto& [flag, path] : {std::pair<const char*, std::string>{"--cubin", options.cubin}, {"--reference", options.reference}})
    if (!path.empty() && !path_exists(path))
      return make_error(ciq::errc::usage, std::string(flag) + " " + path + ": no such file (the cubin to replay with)");
  auto replayer = Replayer::open(options.device, std::move(*captures));
  if (!replayer) return replayer.error();
  std::fprintf(stderr, "ciq-replay: %zu capture(s) loaded on %s\n", (*replayer)->captures().size(),
               printable((*replayer)->device_description()).c_str());
  return replayer;
}

} // namespace

Result<std::vector<formats::Capture>> read_captures(const std::vector<std::string>& paths) {
  std::vector<formats::Capture> out;
  for (const auto& path : paths) {
    if (!is_directory(path)) return make_error("io", path + ": no such capture directory");
    if (path_exists(join_path(path, formats::k_launch_file))) {
      auto c = formats::read_capture(path);
      if (!c) return c.error();
      out.push_back(std::move(*c));
      continue;
    }
    auto set = formats::read_capture_set(path);
    if (!set) return set.error();
    for (const auto& problem : set->problems) warning_line("skipped: " + problem);
    if (set->captures.empty())
      return make_error("io", path + ": no capture here (no launch.json, and no <pid>-<n>/launch.json under it)" +
                                  (set->problems.empty() ? std::string() : "; unreadable: " + set->problems.front()));
    for (auto& c : set->captures) out.push_back(std::move(c));
  }
  return out;
}

int run_plan(const Options& options) {
  auto captures = read_captures(options.captures);
  if (!captures) {
    error_line(captures.error().message);
    return k_exit_error;
  }
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < captures->size(); ++i) {
    if (i) std::fputs("\n", stdout);
    std::fputs(describe_plan((*captures)[i]).c_str(), stdout);
    bytes += 2 * (*captures)[i].bytes();
  }
  std::printf("\ntotal: %zu capture(s), %" PRIu64 " bytes of device memory\n", captures->size(), bytes);
  return k_exit_ok;
}

namespace {

// The replayer with its captures loaded and, with --reference, the
// reference replayed and checked; the exit status that ends it otherwise.
int start(const Options& options, std::unique_ptr<Replayer>& replayer, ReferenceOutputs& reference) {
  auto opened = open_replayer(options);
  if (!opened) {
    error_line(opened.error().message);
    return k_exit_error;
  }
  replayer = std::move(*opened);
  if (!options.reference.empty()) return replay_reference(*replayer, options, reference);
  return k_exit_ok;
}

} // namespace

int run_once(const Options& options) {
  std::unique_ptr<Replayer> replayer;
  ReferenceOutputs reference;
  if (int status = start(options, replayer, reference); status != k_exit_ok) return status;
  Replayer& r = *replayer;
  auto module = r.load_module(options.cubin);
  if (!module) {
    error_line("--cubin " + module.error().message);
    return k_exit_error;
  }
  if (!options.reference.empty()) {
    OutputBuffers buffers;
    auto wrong = check_outputs(r, **module, reference, options.compare, buffers);
    if (!wrong) {
      error_line(wrong.error().message);
      return k_exit_error;
    }
    if (!wrong->empty()) {
      result_line(*wrong);
      return k_exit_wrong_answer;
    }
    result_line("outputs: same as the reference's (--compare " + compare_mode_text(options.compare) + ")");
  } else {
    // No reference: say whether the candidate reproduces the program's own
    // launch (the digests capture.h records), without judging it.
    std::vector<HostBytes> got;
    for (std::size_t i = 0; i < r.captures().size(); ++i) {
      if (auto replayed = r.outputs(i, **module, got); !replayed) {
        error_line(r.captures()[i].dir + ": " + replayed.error().message);
        return k_exit_error;
      }
      const auto& allocations = r.captures()[i].allocations;
      if (std::none_of(allocations.begin(), allocations.end(), [](const auto& a) { return !a.after_xxh128.empty(); })) {
        result_line("outputs: not compared (the capture records no digest of the program's launch; capture " +
                    r.captures()[i].dir + ")");
        continue;
      }
      auto differing = unfaithful_allocations(r.captures()[i], got);
      std::string which;
      for (auto a : differing) which += (which.empty() ? "" : ", ") + std::to_string(a);
      result_line("outputs: " +
                  (differing.empty() ? std::string("same as the program's launch")
                                     : "allocation(s) " + which + " differ from the program's launch") +
                  " (capture " + r.captures()[i].dir + ")");
    }
  }
  auto lines = time_all(r, **module, options, options.samples);
  if (!lines) {
    error_line(lines.error().message);
    return k_exit_error;
  }
  for (const auto& l : *lines) result_line(l);
  return k_exit_ok;
}

int run_server(const Options& options, std::FILE* in, std::FILE* out) {
  std::unique_ptr<Replayer> replayer;
  ReferenceOutputs reference;
  if (int status = start(options, replayer, reference); status != k_exit_ok) return status;
  Replayer& r = *replayer;
  std::fprintf(stderr, "ciq-replay: serving; requests on stdin: --cubin FILE [--samples N] [--check]\n");
  OutputBuffers buffers; // a candidate's outputs, copied back into the last check's buffers
  while (auto wire = read_wire_request(in)) {
    std::vector<std::string> lines;
    int status = 0;
    auto fail = [&](const std::string& why) {
      lines = {"ciq-error: " + printable(why)};
      status = 1;
    };
    auto request = parse_request(wire->words);
    if (!request) {
      fail(request.error().message);
    } else if (auto module = r.load_module(request->cubin); !module) {
      fail(module.error().message);
    } else if (request->check) {
      if (options.reference.empty()) {
        fail("a --check request needs a reference: start ciq-replay serve with --reference FILE");
      } else if (auto wrong = check_outputs(r, **module, reference, options.compare, buffers); !wrong) {
        fail(wrong.error().message);
      } else if (!wrong->empty()) {
        lines = {*wrong};
        status = 1;
      } else {
        lines = {"outputs: same as the reference's (--compare " + compare_mode_text(options.compare) + ")"};
      }
    } else if (auto timed = time_all(r, **module, options, request->samples.value_or(options.samples)); !timed) {
      fail(timed.error().message);
    } else {
      lines = std::move(*timed);
    }
    std::string answer = format_answer(lines, status, wire->id);
    std::fwrite(answer.data(), 1, answer.size(), out);
    std::fflush(out);
    if (r.broken()) {
      error_line("a launch left the GPU context unusable (" + lines.front() + "); exiting so that a fresh server takes over");
      return k_exit_error;
    }
  }
  return k_exit_ok;
}

} // namespace ciq::replay
