#include "tuner/commands/program_check.h"

#include "tuner/measure/command.h"
#include "tuner/objectives/statistics.h"
#include "tuner/run/profiling.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/text.h"

#include <cmath>
#include <cstdlib>
#include <optional>

namespace ciq::tuner {

namespace {

// CIQ_DISABLE as the process had it, put back however the check ends.
class DisableSwitch {
public:
  DisableSwitch() {
    if (const char* v = std::getenv(name_)) saved_ = v;
  }
  ~DisableSwitch() {
    if (saved_) ::setenv(name_, saved_->c_str(), 1);
    else ::unsetenv(name_);
  }
  void set(bool disabled) {
    if (disabled) ::setenv(name_, "1", 1);
    else ::unsetenv(name_);
  }

private:
  const char* name_ = env_name(Env::disable);
  std::optional<std::string> saved_;
};

// One fresh build and run of the program; its GPU time (every kernel's), ms.
Result<double> one_run(const TuneOptions& o, const std::string& dir) {
  std::map<std::string, std::string> values = {{"workdir", join_path(dir, "work")},
                                               {"gpu", o.setup.gpus.empty() ? "0" : o.setup.gpus.front()},
                                               {"controls", "/dev/null"}};
  if (auto made = make_dirs(values["workdir"]); !made) return made.error();
  auto argv = command_argv(o.setup.bench, values, o.setup.shell);
  if (!argv) return argv.error();
  auto ran = capture_profile(o.setup.build, *argv, o.setup.shell, dir, o.setup.inject_library, values, /*quiet=*/true);
  if (!ran) return ran.error();
  if (!ran->program_describe.empty())
    return make_error("program", "the program " + ran->program_describe + " (log: " + join_path(dir, "profile.log") + ")");
  auto read = read_profile(ran->kernel_dir, "");
  if (!read) return read.error();
  double ns = 0;
  for (const auto& k : read->trace.kernels) ns += double(k.stats.total_ns);
  return ns / 1e6;
}

} // namespace

Result<ProgramCheck> check_program(const TuneOptions& o, const std::string& dir, int pairs) {
  if (auto made = make_dirs(dir); !made) return made.error();
  ProgramCheck check;
  std::string csv = "pair,cache,gpu_ms\n";
  DisableSwitch cache_off;
  for (int i = 0; i < pairs; ++i)
    for (bool with : {false, true}) {
      cache_off.set(!with);
      std::string side = with ? "with" : "without";
      auto ms = one_run(o, join_path(dir, "pair-" + std::to_string(i) + "-" + side));
      if (!ms) return make_error(ms.error().code, "the program check's run " + std::to_string(i + 1) + " " + side + " the cache: " +
                                                      ms.error().message);
      (with ? check.with_ms : check.without_ms).push_back(*ms);
      csv += std::to_string(i) + "," + side + "," + format_number(*ms) + "\n";
    }
  if (auto w = write_file_atomic(join_path(dir, "samples.csv"), csv); !w) return w.error();
  if (pairs >= 2) check.p_value = welch_t_test(check.with_ms, check.without_ms).p_less;
  double before = median(check.without_ms);
  check.change = before > 0 ? median(check.with_ms) / before - 1 : 0;
  return check;
}

std::string describe(const ProgramCheck& check, int pairs) {
  char line[256];
  std::snprintf(line, sizeof line, "%.3f -> %.3f ms of GPU time (%+.2f %%, p = %.3g), medians of %d fresh build(s) and run(s) each",
                median(check.without_ms), median(check.with_ms), check.change * 100, check.p_value, pairs);
  return line;
}

} // namespace ciq::tuner
