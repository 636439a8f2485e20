// <run dir>/best.controls (best_controls.h).
#include "tuner/rundir/best_controls.h"

#include "utils/files.h"

namespace ciq::tuner {

std::string best_controls_path(const std::string& run_dir) { return join_path(run_dir, "best.controls"); }

Result<void> write_best_controls(const std::string& run_dir, const std::string& candidate,
                                 const std::optional<spaces::ControlSet>& controls) {
  std::string text = "# best candidate of " + run_dir + "\n# " + candidate + "\n";
  if (controls) text += spaces::format_control_set(*controls);
  return write_file_atomic(best_controls_path(run_dir), text);
}

Result<spaces::ControlSet> read_controls_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return spaces::parse_control_set(*text, path);
}

} // namespace ciq::tuner
