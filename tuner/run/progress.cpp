#include "tuner/run/progress.h"

#include "tuner/measure/evaluator.h"
#include "utils/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace ciq::tuner {

std::string percent(double from, double to) {
  if (from == 0 || !std::isfinite(from) || !std::isfinite(to)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, " (%+.1f%%)", (to - from) / std::fabs(from) * 100);
  return buf;
}

double shown(const TuneOptions& o, const EvalRecord& r, std::size_t k) {
  if (!r.evaluation.valid || k >= r.evaluation.objectives.size()) return NAN;
  double v = r.evaluation.objectives[k];
  return o.setup.objectives[k].maximize ? -v : v;
}

namespace {
struct SummaryChannel {
  bool on = false, printed = false;
  std::string out_dir;
};
SummaryChannel& channel() {
  static SummaryChannel c;
  return c;
}
} // namespace

void summaries_on_stdout(const std::string& out_dir) { channel() = SummaryChannel{true, false, out_dir}; }

void print_summary(const RunSummary& summary) {
  std::fflush(stderr);
  std::printf("%s\n", summary.to_json().c_str());
  std::fflush(stdout);
  channel().printed = true;
}

void print_failure_summary(const std::string& message) {
  if (channel().on && !channel().printed) print_summary(RunSummary{channel().out_dir, std::nullopt, RunOutcome::failed, message});
}

int fail(const std::string& message) {
  std::fprintf(stderr, "ciq-tuner: error: %s\n", printable_lines(message).c_str());
  print_failure_summary(message);
  return 1;
}

int fail(const Error& error) {
  fail(error.message);
  return error.code == ciq::errc::usage ? 2 : 1;
}

Progress::Progress(const TuneOptions& o, int budget)
    : o_(o), budget_(budget), tty_(::isatty(2)), start_(std::chrono::steady_clock::now()) {}

void Progress::record(const EvalRecord& r, bool from_journal, const EvalRecord* baseline, const EvalRecord* best) {
  if (!seen_.insert(r.candidate).second) return; // asked again: already counted
  ++done_;
  if (!r.evaluation.valid) ++failed_;
  if (from_journal) ++replayed_;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int fresh = done_ - replayed_;
  double eta = fresh > 0 ? elapsed / fresh * std::max(0, budget_ - done_) : 0;
  // Pruning trials come after the budget: counted apart, not budgeted.
  if (pruning_) ++pruned_;
  std::string line = pruning_ ? "ciq-tuner: [prune] " + std::to_string(done_) + " (" + std::to_string(done_ - pruned_) +
                                    " searched + " + std::to_string(pruned_) + " pruning) "
                              : "ciq-tuner: [gen " + std::to_string(r.generation) + "] " + std::to_string(done_) + "/" +
                                    std::to_string(budget_) + " ";
  std::size_t k = o_.prefer; // the objective --prefer names (the first by default): the one "best" is about
  auto change = [&](const EvalRecord& to) { return baseline ? percent(shown(o_, *baseline, k), shown(o_, to, k)) : ""; };
  if (r.evaluation.valid) {
    line += format_number(shown(o_, r, k)) + change(r);
    if (r.status == EvalStatus::same_code) line += " (same code)";
  } else {
    line += "invalid: " + printable(r.evaluation.reason); // whole: the end of a ptxas warning is what says why
  }
  if (best) line += " | best " + format_number(shown(o_, *best, k)) + change(*best);
  line += " | " + std::to_string(failed_) + " failed";
  if (fresh > 0 && done_ < budget_ && !pruning_) line += " | ETA " + std::to_string(int(eta)) + "s";
  if (from_journal) line += " (from journal)";
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    if (!r.evaluation.valid) std::fprintf(stderr, "\n");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

void Progress::finish() {
  if (tty_) std::fprintf(stderr, "\n");
}

void say_gpu_defaults(const TuneOptions& o, const Evaluator& evaluator) {
  const auto& defaults = evaluator.gpu_defaults();
  if (defaults.size() < 2) return;
  std::size_t k = o.prefer;
  std::string line;
  for (const auto& d : defaults)
    line += (line.empty() ? "" : ", ") + std::string("GPU ") + d.gpu + " " + format_number(d.values[k]) +
            (&d == &defaults.front() ? "" : percent(defaults.front().values[k], d.values[k]));
  std::fprintf(stderr, "ciq-tuner: the default's %s on each GPU (median of %d run%s): %s; each run is compared with the default "
                       "of the GPU it ran on\n", o.setup.objectives[k].name.c_str(), defaults.front().runs, defaults.front().runs == 1 ? "" : "s", line.c_str());
}

void say_front(const TuneOptions& o, const std::vector<const EvalRecord*>& front) {
  if (front.size() < 2) return;
  std::fprintf(stderr, "ciq-tuner: Pareto front (%zu points; * the preferred one: the best %s that is no worse than "
                       "the default on the other objectives):\n",
               front.size(), o.setup.objectives[o.prefer].name.c_str());
  for (auto* r : front) {
    std::string values;
    for (std::size_t k = 0; k < o.setup.objectives.size(); ++k) values += (k ? ", " : "") + format_number(shown(o, *r, k));
    std::fprintf(stderr, "  %s %s  %s\n", r == front.front() ? "*" : " ", values.c_str(), r->candidate.c_str());
  }
}

int say_results(const TuneOptions& o, const std::vector<EvalRecord>& records, const EvalRecord& def, const EvalRecord* best,
                const std::string& verdict, int searched) {
  int invalid = 0;
  for (const auto& r : records) invalid += !r.evaluation.valid;
  std::string split = int(records.size()) > searched ? ": " + std::to_string(searched) + " searching (--budget), " +
                                                          std::to_string(int(records.size()) - searched) + " pruning the winner"
                                                     : "";
  // With several objectives, in the preferred one's terms (named).
  std::size_t k = o.prefer;
  std::string named = o.setup.objectives.size() > 1 ? " " + o.setup.objectives[k].name : "";
  std::fprintf(stderr, "ciq-tuner: %zu evaluations%s (%d invalid); default%s %s, best found %s%s\n", records.size(), split.c_str(),
               invalid, named.c_str(), format_number(shown(o, def, k)).c_str(), best ? format_number(shown(o, *best, k)).c_str() : "-",
               best ? percent(shown(o, def, k), shown(o, *best, k)).c_str() : "");
  std::fprintf(stderr, "ciq-tuner: verdict: %s\n", printable_lines(verdict).c_str());
  // Where it all is: without --out the directory was named for the time.
  std::fprintf(stderr, "ciq-tuner: results in %s (summary.json, results.csv, best.controls; `ciq-tuner report %s` draws them)\n",
               printable(o.out_dir).c_str(), printable(o.out_dir).c_str());
  return invalid;
}

} // namespace ciq::tuner
