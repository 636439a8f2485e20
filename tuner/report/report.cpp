#include "tuner/report/report.h"

#include "tuner/report/chart.h"

#include "tuner/objectives/statistics.h"
#include "tuner/rundir/campaign_file.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/results.h"
#include "tuner/rundir/summary.h"
#include "tuner/search/search.h"
#include "utils/files.h"
#include "utils/json.h"
#include "utils/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

namespace ciq::tuner {

namespace {

using namespace chart;


const char* k_ok = "#1f77b4", *k_same = "#9e9e9e", *k_invalid = "#d62728", *k_best = "#2ca02c", *k_default = "#ff7f0e";

struct Run {
  std::string dir;
  std::vector<EvalRecord> records;         // journal order
  std::optional<SummaryResults> summary;   // summary.json's results; none while the run has not finished
  std::vector<std::string> objectives;     // names, from results.csv's header
  std::vector<bool> maximize;
};

Result<Run> load_run(const std::string& dir) {
  Run run;
  run.dir = dir;
  // The journal as it is: a running tuner may be appending to it.
  auto journal = read_journal(join_path(dir, "journal.jsonl"));
  if (!journal) return make_error("report", "'" + dir + "' is not a run directory (" + journal.error().message + ")");
  run.records = std::move(*journal);
  std::stable_sort(run.records.begin(), run.records.end(), [](auto& a, auto& b) { return a.number < b.number; });
  // A summary or results.csv that cannot be read leaves its parts of the
  // report out (numbered objectives, "not finished"), not the whole report.
  if (auto summary = read_summary(dir); summary && *summary) run.summary = (*summary)->results;
  if (auto names = read_objective_names(dir)) run.objectives = std::move(*names);
  std::size_t count = 0;
  for (const auto& r : run.records) count = std::max(count, r.evaluation.objectives.size());
  run.objectives.resize(std::max(run.objectives.size(), count));
  for (std::size_t k = 0; k < run.objectives.size(); ++k)
    if (run.objectives[k].empty()) run.objectives[k] = "objective " + std::to_string(k + 1);
  run.maximize.assign(run.objectives.size(), false);
  for (const auto& r : run.records)
    if (r.evaluation.valid)
      for (std::size_t k = 0; k < r.evaluation.objectives.size() && k < r.samples.size(); ++k)
        if (!r.samples[k].empty() && median(r.samples[k]) != 0) run.maximize[k] = r.evaluation.objectives[k] == -median(r.samples[k]);
  return run;
}

/// The value of objective k as printed (not negated).
double shown(const Run& run, const EvalRecord& r, std::size_t k) {
  double v = r.evaluation.objectives[k];
  return run.maximize[k] ? -v : v;
}

// The default is always a run's first evaluation (number 0).
const EvalRecord* default_record(const Run& run) {
  for (const auto& r : run.records)
    if (r.number == 0) return &r;
  return nullptr;
}

std::string convergence_plot(const Run& run, const std::string& id) {
  std::vector<std::pair<double, double>> steps; // (evaluation index, best so far)
  int index = 0;
  double lo = INFINITY, hi = -INFINITY;
  // "Best" as the run means it (preferred_point): with several objectives,
  // the best first objective among evaluations no worse than the default on
  // the others, so that the curve ends where the summary's best is.
  const EvalRecord* def = default_record(run);
  // --prefer: the objective the run preferred (summary.json, counted from 1 as
  // --prefer counts), else the first.
  double preferred = run.summary ? run.summary->prefer : 1;
  std::size_t p = preferred >= 1 ? std::size_t(preferred) - 1 : 0;
  if (p >= run.objectives.size()) p = 0;
  // The preferred point of the records so far, kept as they come:
  // preferred_point() is a first-wins minimum under a fixed test, so the
  // best of (the best so far, the new one) is the best of all so far. (Asking
  // it of the whole prefix each time was quadratic: 21 s at 40k evaluations.)
  const Evaluation* best_so_far = nullptr;
  for (const auto& r : run.records) {
    ++index;
    if (!r.evaluation.valid || r.evaluation.objectives.empty()) continue;
    std::vector<const Evaluation*> contenders{&r.evaluation};
    if (best_so_far) contenders.insert(contenders.begin(), best_so_far);
    std::size_t best = preferred_point(contenders, def ? &def->evaluation : nullptr, p);
    if (best == SIZE_MAX) continue;
    best_so_far = contenders[best];
    double v = best_so_far->objectives[p];
    double s = run.maximize[p] ? -v : v;
    steps.emplace_back(index, s);
    lo = std::min(lo, s), hi = std::max(hi, s);
  }
  if (def && def->evaluation.valid) lo = std::min(lo, shown(run, *def, p)), hi = std::max(hi, shown(run, *def, p));
  if (steps.empty()) return "<p>No valid evaluation to plot.</p>\n";
  Chart chart(id, "Best so far (" + run.objectives[p] + ")", 1, std::max(2, index), lo, hi, "evaluations",
              run.objectives[p] + (run.maximize[p] ? " (higher is better)" : " (lower is better)"));
  chart.whole_x();
  std::string d;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    double px = chart.x(steps[i].first), py = chart.y(steps[i].second);
    if (i == 0) d = "M" + num(px) + " " + num(py);
    else d += " H" + num(px) + " V" + num(py);
  }
  d += " H" + num(chart.x(std::max(2, index)));
  chart.add("<path class=\"mark\" d=\"" + d + "\" fill=\"none\" stroke=\"" + k_best + "\" stroke-width=\"2\"><title>best found " +
            esc(format_number(steps.back().second)) + "</title></path>");
  if (def && def->evaluation.valid) chart.hline(shown(run, *def, 0), k_default, "default " + format_number(shown(run, *def, 0)));
  return chart.svg();
}

std::string evaluations_plot(const Run& run) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& r : run.records)
    if (r.evaluation.valid && !r.evaluation.objectives.empty()) lo = std::min(lo, shown(run, r, 0)), hi = std::max(hi, shown(run, r, 0));
  if (!std::isfinite(lo)) return "";
  Chart chart("evaluations", "Every evaluation (blue: measured, grey: same code as an earlier one, red: invalid)", 1,
              std::max<double>(2, double(run.records.size())), lo, hi, "evaluations", run.objectives[0]);
  chart.whole_x();
  int index = 0;
  for (const auto& r : run.records) {
    ++index;
    if (!r.evaluation.valid || r.evaluation.objectives.empty()) {
      chart.add("<rect class=\"mark\" x=\"" + num(chart.x(index) - 3) + "\" y=\"" + num(chart.top() + 2) +
                "\" width=\"6\" height=\"6\" fill=\"" + k_invalid + "\"><title>" + esc("#" + std::to_string(r.number) + " " +
                r.candidate + ": " + r.evaluation.reason) + "</title></rect>");
      continue;
    }
    chart.point(index, shown(run, r, 0), r.status == EvalStatus::same_code ? k_same : k_ok,
                "#" + std::to_string(r.number) + " " + r.candidate + ": " + format_number(shown(run, r, 0)));
  }
  if (const EvalRecord* def = default_record(run); def && def->evaluation.valid)
    chart.hline(shown(run, *def, 0), k_default, "default");
  return chart.svg();
}

std::string pareto_plot(const Run& run) {
  if (run.objectives.size() < 2) return "";
  std::vector<const EvalRecord*> valid;
  for (const auto& r : run.records)
    if (r.evaluation.valid && r.evaluation.objectives.size() >= 2 && r.status != EvalStatus::same_code) valid.push_back(&r);
  if (valid.empty()) return "";
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (auto* r : valid) {
    x0 = std::min(x0, shown(run, *r, 0)), x1 = std::max(x1, shown(run, *r, 0));
    y0 = std::min(y0, shown(run, *r, 1)), y1 = std::max(y1, shown(run, *r, 1));
  }
  Chart chart("pareto", "Pareto front (green) of the first two objectives; the default ringed in orange", x0, x1, y0, y1,
              run.objectives[0], run.objectives[1]);
  for (auto* r : valid) {
    bool dominated = std::any_of(valid.begin(), valid.end(), [&](const EvalRecord* o) {
      bool no_worse = true, better = false;
      for (std::size_t k = 0; k < 2; ++k) {
        no_worse &= o->evaluation.objectives[k] <= r->evaluation.objectives[k];
        better |= o->evaluation.objectives[k] < r->evaluation.objectives[k];
      }
      return no_worse && better;
    });
    chart.point(shown(run, *r, 0), shown(run, *r, 1), dominated ? k_ok : k_best, r->candidate, dominated ? 3 : 5);
  }
  // Where the default stands: what every point of the front trades against.
  if (const EvalRecord* def = default_record(run); def && def->evaluation.valid && def->evaluation.objectives.size() >= 2) {
    double dx = chart.x(shown(run, *def, 0)), dy = chart.y(shown(run, *def, 1));
    chart.add("<circle class=\"mark\" cx=\"" + num(dx) + "\" cy=\"" + num(dy) + "\" r=\"8\" fill=\"none\" stroke=\"" +
              k_default + "\" stroke-width=\"2\"><title>default: " + esc(format_number(shown(run, *def, 0))) + ", " +
              esc(format_number(shown(run, *def, 1))) + "</title></circle>");
    chart.add("<text x=\"" + num(dx + 11) + "\" y=\"" + num(dy - 9) + "\" fill=\"" + k_default + "\">default</text>");
  }
  return chart.svg();
}

std::string verification_plot(const Run& run, std::string* note) {
  auto text = read_file(join_path(join_path(run.dir, "verify"), "samples.csv"));
  if (!text) {
    *note = "No re-measurement: the objective is deterministic, or nothing was verified.";
    return "";
  }
  std::map<std::string, std::vector<double>> sides; // of the first objective
  std::string objective;
  bool header = true;
  for (auto line : split(*text, '\n')) {
    if (header || trim(line).empty()) {
      header = false;
      continue;
    }
    auto first = line.find(','), last = line.rfind(','), run_at = line.rfind(',', last - 1);
    if (first == std::string_view::npos || run_at == std::string_view::npos || run_at <= first) continue;
    std::string name(line.substr(first + 1, run_at - first - 1));
    if (objective.empty()) objective = name;
    if (name != objective) continue;
    char* end = nullptr;
    std::string value(line.substr(last + 1));
    double v = std::strtod(value.c_str(), &end);
    if (end != value.c_str()) sides[std::string(line.substr(0, first))].push_back(v);
  }
  if (sides["default"].empty() || sides["best"].empty()) return "";
  double lo = INFINITY, hi = -INFINITY;
  for (auto& [_, values] : sides)
    for (double v : values) lo = std::min(lo, v), hi = std::max(hi, v);
  Chart chart("verification", "Verification: interleaved runs, default (orange) against the winner (green)", 0, 3, lo, hi,
              "", objective);
  int column = 0;
  for (const char* side : {"default", "best"}) {
    ++column;
    const auto& values = sides[side];
    for (std::size_t i = 0; i < values.size(); ++i) {
      double jitter = (double(i % 7) - 3) * 0.04;
      chart.point(column + jitter, values[i], column == 1 ? k_default : k_best, std::string(side) + " run " + std::to_string(i) + ": " +
                  format_number(values[i]));
    }
    double m = median(values);
    chart.add("<line class=\"mark\" x1=\"" + num(chart.x(column - 0.3)) + "\" x2=\"" + num(chart.x(column + 0.3)) + "\" y1=\"" +
              num(chart.y(m)) + "\" y2=\"" + num(chart.y(m)) + "\" stroke=\"#000\" stroke-width=\"2\"/>");
    chart.add("<text x=\"" + num(chart.x(column)) + "\" y=\"" + num(chart.bottom() + 16) + "\" text-anchor=\"middle\">" +
              std::string(column == 1 ? "default" : "winner") + ", median " + esc(format_number(m)) + "</text>");
  }
  return chart.svg();
}

std::string pruning_plot(const Run& run, std::string* note) {
  std::string winner = run.summary ? run.summary->controls : "";
  if (winner.empty() || winner == k_default_candidate) {
    *note = "Nothing shipped: no winner to prune.";
    return "";
  }
  std::map<std::string, const EvalRecord*> by_candidate;
  for (const auto& r : run.records) by_candidate.emplace(r.candidate, &r);
  auto found = by_candidate.find(winner);
  if (found == by_candidate.end() || !found->second->evaluation.valid) return "";
  double base = shown(run, *found->second, 0);
  std::vector<std::string> parts;
  for (auto p : split(winner, ';')) parts.emplace_back(p);
  std::vector<std::pair<std::string, double>> effects; // knob, % worse without it
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string without;
    for (std::size_t j = 0; j < parts.size(); ++j)
      if (j != i) without += (without.empty() ? "" : ";") + parts[j];
    const EvalRecord* def = default_record(run);
    auto it = without.empty() && def ? by_candidate.find(def->candidate) : by_candidate.find(without);
    if (it == by_candidate.end() || !it->second->evaluation.valid || base == 0) continue;
    double v = shown(run, *it->second, 0);
    double worse = (run.maximize[0] ? base - v : v - base) / std::fabs(base) * 100;
    effects.emplace_back(parts[i], worse);
  }
  if (effects.empty()) {
    *note = "The winner's knobs have no knock-out evaluations in the journal.";
    return "";
  }
  double lo = 0, hi = 0;
  for (auto& [_, e] : effects) lo = std::min(lo, e), hi = std::max(hi, e);
  Chart chart("pruning", "Each knob of the winner: % worse without it", 0, double(effects.size()), lo, hi, "", "% worse without the knob");
  for (std::size_t i = 0; i < effects.size(); ++i) {
    double y0 = chart.y(0), y1 = chart.y(effects[i].second);
    double left = chart.x(double(i) + 0.15), right = chart.x(double(i) + 0.85);
    chart.add("<rect class=\"mark\" x=\"" + num(left) + "\" y=\"" + num(std::min(y0, y1)) + "\" width=\"" + num(right - left) +
              "\" height=\"" + num(std::max(1.0, std::fabs(y1 - y0))) + "\" fill=\"" + k_ok + "\"><title>" +
              esc(effects[i].first + ": " + format_number(effects[i].second) + " %") + "</title></rect>");
    chart.add("<text x=\"" + num((left + right) / 2) + "\" y=\"" + num(std::min(y0, y1) - 4) + "\" text-anchor=\"middle\">" +
              esc(effects[i].first) + "</text>");
  }
  return chart.svg();
}

const char* k_style = "body{font-family:sans-serif;max-width:700px;margin:2em auto;color:#222}"
                      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
                      "svg{display:block;margin:1em 0}code{background:#f4f4f4}";

// Records, on each plot, how many of its marks the browser laid out.
const char* k_script = "<script>for(const s of document.querySelectorAll('svg.plot')){let n=0;"
                       "for(const m of s.querySelectorAll('.mark')){const b=m.getBBox();if(b.width>0||b.height>0)n++;}"
                       "s.setAttribute('data-rendered-marks',n);}document.body.setAttribute('data-report','rendered');</script>";

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + esc(title) + "</title><style>" + k_style +
         "</style></head>\n<body>\n<h1>" + esc(title) + "</h1>\n" + body + k_script + "\n</body></html>\n";
}

Result<void> save_svg(const std::string& dir, const std::string& name, const std::string& svg) {
  if (svg.empty() || svg[0] != '<' || svg.rfind("<svg", 0) != 0) return {};
  if (auto made = make_dirs(dir); !made) return made.error();
  return write_file_atomic(join_path(dir, name + ".svg"), "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg);
}

// The run at a glance: its directory, verdict, winner, baseline and best
// (every objective's, the front's size), the default on each GPU, the
// p-value, the evaluations and the objectives.
std::string summary_table(const Run& run) {
  const std::string& dir = run.dir;
  std::string body = "<table>\n";
  auto row = [&](const std::string& k, const std::string& v) { body += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n"; };
  row("run directory", dir);
  const SummaryResults* summary = run.summary ? &*run.summary : nullptr;
  row("verdict", summary ? summary->verdict : "(the run has not finished)");
  row("winner", summary ? summary->controls : "-");
  row("baseline / best", format_number(summary ? summary->baseline : NAN) + " / " + format_number(summary ? summary->best : NAN));
  if (summary && !summary->best_values.empty()) { // several objectives: the best is the front's preferred point
    auto values = [](const std::vector<double>& a) {
      std::string t;
      for (double v : a) t += (t.empty() ? "" : ", ") + format_number(v);
      return t;
    };
    row("baseline / best, every objective", values(summary->baseline_values) + " / " + values(summary->best_values));
    row("Pareto front", std::to_string(summary->front.size()) +
                            " points; the best is the one with the best first objective that is no worse than the default on the others");
  }
  // Per-GPU baselines: the default on each GPU, each run compared with its own GPU's.
  if (summary && summary->gpu_defaults.size() > 1) {
    std::size_t k = std::size_t(std::max(1, summary->prefer)) - 1;
    std::string text;
    double first = NAN;
    for (const auto& d : summary->gpu_defaults) {
      double v = k < d.values.size() ? d.values[k] : NAN;
      if (std::isnan(first)) first = v;
      text += (text.empty() ? "" : ", ") + std::string("GPU ") + (d.gpu.empty() ? "?" : d.gpu) + ": " + format_number(v);
      if (&d != &summary->gpu_defaults.front() && first != 0 && std::isfinite(v)) {
        char percent[32];
        std::snprintf(percent, sizeof percent, " (%+.1f %%)", (v - first) / std::fabs(first) * 100);
        text += percent;
      }
    }
    row("default on each GPU", text + "; every run was compared with the default of its GPU");
  }
  row("p-value", summary && summary->p_value ? format_number(*summary->p_value) : "-");
  int invalid = int(std::count_if(run.records.begin(), run.records.end(), [](auto& r) { return !r.evaluation.valid; }));
  row("evaluations", std::to_string(run.records.size()) + " (" + std::to_string(invalid) + " invalid)");
  row("objectives", [&] {
    std::string s;
    for (std::size_t k = 0; k < run.objectives.size(); ++k)
      s += (k ? ", " : "") + run.objectives[k] + (run.maximize[k] ? " (max)" : " (min)");
    return s;
  }());
  body += "</table>\n";
  return body;
}

Result<std::string> run_report(const std::string& dir, std::string* title) {
  auto loaded = load_run(dir);
  if (!loaded) return loaded.error();
  const Run& run = *loaded;
  *title = "ciq-tuner report: " + base_name(dir);
  std::string body = summary_table(run);
  // Why evaluations were invalid (build errors, wrong answers, controls the
  // compiler warned it ignores), most frequent first.
  std::map<std::string, int> reasons;
  for (const auto& r : run.records)
    if (!r.evaluation.valid) ++reasons[r.evaluation.reason];
  if (!reasons.empty()) {
    std::vector<std::pair<int, std::string>> by_count;
    for (const auto& [reason, n] : reasons) by_count.emplace_back(-n, reason);
    std::sort(by_count.begin(), by_count.end());
    body += "<h2>Invalid evaluations</h2>\n<table>\n<tr><th>evaluations</th><th>reason</th></tr>\n";
    for (const auto& [n, reason] : by_count)
      body += "<tr><td>" + std::to_string(-n) + "</td><td>" + esc(reason) + "</td></tr>\n";
    body += "</table>\n";
  }
  std::string svg_dir = join_path(dir, "report");
  std::string verify_note, prune_note;
  std::vector<std::pair<std::string, std::string>> plots{
      {"convergence", convergence_plot(run, "convergence")}, {"evaluations", evaluations_plot(run)}, {"pareto", pareto_plot(run)},
      {"verification", verification_plot(run, &verify_note)}, {"pruning", pruning_plot(run, &prune_note)}};
  for (const auto& [name, svg] : plots) {
    if (svg.empty()) {
      const std::string& note = name == "verification" ? verify_note : name == "pruning" ? prune_note : "";
      if (!note.empty()) body += "<p><em>" + esc(name) + ": " + esc(note) + "</em></p>\n";
      continue;
    }
    body += svg;
    if (auto saved = save_svg(svg_dir, name, svg); !saved) return saved.error();
  }
  return body;
}

Result<std::string> campaign_report(const std::string& dir, std::string* title) {
  auto rows = read_campaign(dir);
  if (!rows) return rows.error();
  *title = "ciq-tuner campaign report: " + base_name(dir);
  std::string body = "<table>\n<tr><th>kernel</th><th>state</th><th>verdict</th><th>baseline</th><th>best</th><th>shipped</th><th>controls</th></tr>\n";
  std::string plots;
  int index = 0;
  for (const CampaignRow& k : *rows) {
    body += "<tr><td><code>" + esc(k.kernel) + "</code></td><td>" + esc(k.state) + "</td><td>" +
            esc(k.verdict.empty() ? k.error : k.verdict) + "</td><td>" + esc(format_number(k.baseline)) +
            "</td><td>" + esc(format_number(k.best)) + "</td><td>" + (k.shipped ? "yes" : "no") +
            "</td><td><code>" + esc(k.controls) + "</code></td></tr>\n";
    // A campaign started with a relative --out (before it recorded absolute
    // paths) names its runs relative to where it ran: they are in its runs/.
    std::string run_dir = k.run_dir;
    if (!run_dir.empty() && run_dir[0] != '/' && !is_directory(run_dir)) run_dir = join_path(join_path(dir, "runs"), base_name(run_dir));
    auto run = load_run(run_dir);
    if (!run) {
      plots += "<h2><code>" + esc(k.kernel) + "</code></h2>\n<p>no plot: " + esc(run.error().message) + "</p>\n";
      continue;
    }
    std::string id = "convergence-" + std::to_string(index++);
    std::string svg = convergence_plot(*run, id);
    plots += "<h2><code>" + esc(k.kernel) + "</code></h2>\n" + svg;
    if (auto saved = save_svg(join_path(dir, "report"), id, svg); !saved) return saved.error();
  }
  return body + "</table>\n" + plots;
}

} // namespace

Result<std::string> write_report(const std::string& dir, std::string out_file) {
  if (!is_directory(dir)) return make_error("report", "'" + dir + "' is not a directory");
  std::string title;
  bool campaign = path_exists(campaign_path(dir));
  auto body = campaign ? campaign_report(dir, &title) : run_report(dir, &title);
  if (!body) return body.error();
  if (out_file.empty()) out_file = join_path(dir, "report.html");
  if (auto w = write_file_atomic(out_file, page(title, *body)); !w) return w.error();
  return out_file;
}

} // namespace ciq::tuner
