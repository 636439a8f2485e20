// `ciq-tuner report DIR`: a tuning run (or a campaign) as one self-contained
// HTML file with inline SVG plots and no network access, plus each plot as
// its own SVG file for READMEs:
//   convergence   best-so-far of the first objective against evaluations,
//                 the default as a dashed line
//   evaluations   every evaluation's first objective, coloured by status
//                 (ok, same code as an earlier one, invalid at the top edge)
//   pareto        the first two objectives, the front highlighted (two or
//                 more objectives only)
//   verification  the interleaved re-measurement, default against winner,
//                 as strip plots with medians (verify/samples.csv)
//   pruning       per knob of the winner: how much worse the winner is
//                 without it (its knock-out evaluation)
// A campaign's report has the table of kernels and each run's convergence.
// Plot marks carry class "mark"; a small inline script records how many of
// them the browser laid out (data-rendered-marks on each plot), which is
// what the test reads back from headless Chromium.
#pragma once

#include "utils/result.h"

#include <string>

namespace ciq::tuner {

/// Writes `out_file` (default DIR/report.html) and DIR/report/*.svg;
/// returns the HTML file's path.
Result<std::string> write_report(const std::string& dir, std::string out_file);

} // namespace ciq::tuner
