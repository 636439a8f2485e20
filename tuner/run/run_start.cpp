#include "tuner/run/run_start.h"

#include "tuner/run/discovery.h"
#include "tuner/run/progress.h"
#include "tuner/run/run_directory.h"
#include "utils/process.h"

namespace ciq::tuner {

RunStart start_run(TuneOptions& o, const char* interrupted) {
  RunStart start;
  if (auto prepared = prepare_run(o); !prepared) {
    start.exit_status = fail(prepared.error());
    return start;
  }
  if (auto claimed = claim_run_directory(o); !claimed) {
    start.exit_status = fail(claimed.error().message);
    return start;
  }
  auto journal = open_run(o);
  if (!journal) {
    start.exit_status = fail_recorded(o, journal.error().message);
    return start;
  }
  start.journal = std::move(*journal);
  if (interrupted) kill_children_on_interrupt(interrupted);
  auto discovery = discover(o, o.units);
  if (!discovery) {
    start.exit_status = fail_recorded(o, discovery.error().message);
    return start;
  }
  start.discovery = std::move(*discovery);
  // A candidate that adds a warning the default build did not give is not
  // compiled as asked (measure/).
  for (const auto& m : start.discovery) o.setup.baseline_warnings.insert(m.warnings.begin(), m.warnings.end());
  for (const auto& u : o.units) o.setup.baseline_warnings.insert(u.warnings.begin(), u.warnings.end());
  return start;
}

} // namespace ciq::tuner
