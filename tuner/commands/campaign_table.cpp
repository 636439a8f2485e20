#include "tuner/commands/campaign_table.h"

#include "tuner/rundir/campaign_file.h"
#include "utils/json.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cassert>
#include <cstdio>

namespace ciq::tuner {

namespace {

// The state as campaign.json and the table name it: done, failed, or
// pending (any phase still to run).
const char* state_name(KernelPhase p) {
  switch (p) {
  case KernelPhase::done: return "done";
  case KernelPhase::failed: return "failed";
  default: return "pending";
  }
}

/// The relative change of the kernel's objective (best vs baseline).
double change(const KernelResult& r) {
  if (!std::isfinite(r.baseline) || !std::isfinite(r.best) || r.baseline == 0) return NAN;
  return (r.best - r.baseline) / r.baseline;
}

/// What the kernel's change is worth to the program's GPU time: its share
/// times its change, when it shipped (a winner not shipped changes nothing).
double program_change(const KernelResult& r) {
  if (!std::isfinite(r.share)) return NAN;
  return r.shipped ? r.share * change(r) : 0.0;
}

// A kernel's name in the table: printable(), at most 48 bytes, cut at the
// start of a character (never inside its UTF-8 bytes).
std::string table_name(const std::string& kernel) {
  std::string shown = printable(kernel);
  if (shown.size() <= 48) return shown;
  std::size_t cut = 48;
  while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xc0) == 0x80) --cut;
  return shown.substr(0, cut);
}

} // namespace

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string percent_text(double v, const char* format) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, 100 * v);
  return buf;
}

std::string change_text(const KernelResult& r) { return percent_text(change(r), "%+.1f %%"); }

std::string to_json(const std::vector<KernelResult>& results) {
  std::vector<CampaignRow> rows;
  for (const KernelResult& r : results)
    rows.push_back(CampaignRow{r.kernel, r.run_dir, state_name(r.phase), r.verdict, r.objective, r.share, program_change(r),
                               r.baseline, r.best, r.shipped, r.controls, r.evaluations, r.invalid, r.error,
                               r.replay_dir.empty() ? "program" : "replay", r.replay_dir, r.replay_change, r.replay_note,
                               r.refused, r.seconds, r.replay_seconds});
  return campaign_json(rows);
}

void print_table(const std::vector<KernelResult>& results) {
  std::size_t width = 6;
  bool shares = false;
  for (const auto& r : results) {
    width = std::max(width, table_name(r.kernel).size());
    shares |= std::isfinite(r.share);
  }
  if (shares)
    std::fprintf(stderr, "\n%-*s  %6s  %-8s  %-8s  %-8s  %-7s  %s\n", int(width), "kernel", "share", "replay", "change", "program",
                 "shipped", "verdict");
  else
    std::fprintf(stderr, "\n%-*s  %-8s  %-10s  %s\n", int(width), "kernel", "change", "shipped", "verdict");
  double total = 0;
  for (const auto& r : results) {
    std::string verdict = printable(r.phase == KernelPhase::done ? r.verdict
                                                                  : state_name(r.phase) + (r.error.empty() ? "" : ": " + r.error));
    if (shares) {
      if (std::isfinite(program_change(r))) total += program_change(r);
      std::fprintf(stderr, "%-*s  %6s  %-8s  %-8s  %-8s  %-7s  %s\n", int(width), table_name(r.kernel).c_str(),
                   percent_text(r.share, "%.1f%%").c_str(), percent_text(r.replay_change, "%+.1f %%").c_str(), change_text(r).c_str(),
                   percent_text(program_change(r), "%+.2f %%").c_str(), r.shipped ? "yes" : "no", verdict.c_str());
    } else {
      std::fprintf(stderr, "%-*s  %-8s  %-10s  %s\n", int(width), table_name(r.kernel).c_str(), change_text(r).c_str(),
                   r.shipped ? "yes" : "no", verdict.c_str());
    }
  }
  if (shares) {
    std::fprintf(stderr, "program: %s of its GPU time, estimated from the shipped kernels' changes (confirm with fresh runs)\n",
                 percent_text(total, "%+.2f %%").c_str());
    std::fprintf(stderr, "replay: the kernel's change replayed alone; change: in the program (a replay winner is shipped only "
                         "when it wins there too)\n");
  }
}

double relative_change(const SummaryResults& s) {
  if (!std::isfinite(s.baseline) || !std::isfinite(s.best) || s.baseline == 0) return NAN;
  return (s.best - s.baseline) / s.baseline;
}

bool allowed_move(KernelPhase from, KernelPhase to) {
  using P = KernelPhase;
  switch (from) {
  case P::tune: return to == P::done || to == P::failed;
  case P::replay: return to == P::done || to == P::confirm || to == P::tune;
  case P::confirm: return to == P::done || to == P::failed || to == P::confirm_jointly;
  case P::confirm_directives:
  case P::confirm_jointly: return to == P::done || to == P::failed;
  case P::done: return to == P::confirm_directives || to == P::confirm_jointly;
  case P::failed: return false;
  }
  return false;
}

const char* phase_name(KernelPhase p) {
  switch (p) {
  case KernelPhase::tune: return "tune";
  case KernelPhase::replay: return "replay";
  case KernelPhase::confirm: return "confirm";
  case KernelPhase::confirm_directives: return "confirm_directives";
  case KernelPhase::confirm_jointly: return "confirm_jointly";
  case KernelPhase::done: return "done";
  case KernelPhase::failed: return "failed";
  }
  return "?";
}

void move_to(KernelResult& r, KernelPhase to) {
  if (!allowed_move(r.phase, to)) {
    std::fprintf(stderr, "ciq-tuner: internal error: %s: a campaign phase moved %s -> %s\n", printable(r.kernel).c_str(),
                 phase_name(r.phase), phase_name(to));
    assert(!"a campaign phase moved along no allowed move");
  }
  r.phase = to;
}

void start_in(KernelResult& r, KernelPhase p) {
  assert(p == KernelPhase::tune || p == KernelPhase::replay);
  r.phase = p;
}

bool take_results(KernelResult& r, const std::optional<RunSummary>& summary) {
  if (!summary || !summary->results) return false;
  const SummaryResults& s = *summary->results;
  // A run that failed and kept nothing (its verification could not
  // measure) has no outcome to take; one whose publishing failed after it
  // shipped has.
  if (summary->outcome == RunOutcome::failed && s.entries == 0) return false;
  const SummaryKernel* own = nullptr;
  for (const auto& k : s.kernels)
    if (k.kernel == r.kernel) own = &k;
  if (!s.kernels.empty() && !own) return false;
  if (r.phase != KernelPhase::done) move_to(r, KernelPhase::done);
  r.verdict = own ? own->verdict : s.verdict;
  r.controls = own ? own->controls : s.controls;
  r.objective = s.objective;
  r.baseline = own ? own->baseline : s.baseline;
  r.best = own ? own->best : s.best;
  r.shipped = own ? own->shipped : s.shipped;
  r.evaluations = s.evaluations;
  r.invalid = s.invalid;
  r.error.clear();
  return true;
}

std::optional<RunSummary> summary_of(const KernelResult& r) {
  auto summary = read_summary(r.run_dir);
  return summary ? std::move(*summary) : std::nullopt;
}

} // namespace ciq::tuner
