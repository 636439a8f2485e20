// <run dir>/best.controls: the run's best candidate as a control-set file
// (the text spaces/control_set.h reads: what `ciq-cache put --controls` and
// `--seed-controls` take), after two comment lines naming the run and the
// candidate. The file's one owner: written at the end of a search, read by
// campaigns (a replay winner's set, the seed hints taken from earlier
// winners; a confirmation is given its path).
#pragma once

#include "spaces/control_set.h"
#include "utils/result.h"

#include <optional>
#include <string>

namespace ciq::tuner {

/// <run_dir>/best.controls.
std::string best_controls_path(const std::string& run_dir);

/// Writes <run_dir>/best.controls (atomically): the comment lines, then
/// `controls` (none for a search of parameters only: the comments alone).
Result<void> write_best_controls(const std::string& run_dir, const std::string& candidate,
                                 const std::optional<spaces::ControlSet>& controls);

/// Reads a control-set file: best.controls, the sets a campaign writes
/// beside its runs (a joint confirmation's, a directive-only candidate's),
/// and the files --seed-controls and --seed-hint name.
/// Fails when it cannot be read or is not a control set.
Result<spaces::ControlSet> read_controls_file(const std::string& path);

} // namespace ciq::tuner
