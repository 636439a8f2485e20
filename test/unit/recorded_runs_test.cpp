// Tests of tuner/orchestrate/recorded_runs.h's pure parts: the arguments a
// run is started again with, the gains entries recorded, and a run's
// control set made whole again from its entries.
#include "tuner/orchestrate/recorded_runs.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

RecordedEntry entry(const std::string& kind, const std::string& controls, const std::string& provenance = "") {
  std::string head = "format = ciq-record/1\nkind = " + kind + "\n" + (kind == "unit" ? "unit = a.cu\nnvcc = 13.0.88\n" : "kernel = _Z1kv\nptxas = 13.0.88\n") +
                     "target = sm_90a\n" + provenance + "[controls]\nformat = ciq-controls/1\n" + controls;
  auto r = cache::parse_record(head, "test");
  EXPECT_TRUE(r.ok()) << r.error().message;
  return RecordedEntry{"00", r.ok() ? *r : cache::Record{}};
}

} // namespace

TEST(RecordedRuns, without_options_drops_them_with_their_values) {
  std::vector<std::string> saved{"run", "--build", "make --out x", "--out", "old", "--json", "--cache-dir=/c", "-out=o2",
                                 "--budget", "24", "--json=false", "--no-ship"};
  EXPECT_EQ(without_options(saved, {"out", "cache-dir"}, {"json"}),
            (std::vector<std::string>{"run", "--build", "make --out x", "--budget", "24", "--no-ship"}));
}

TEST(RecordedRuns, shown_argv_quotes_what_a_shell_would_split_and_shows_controls) {
  EXPECT_EQ(shown_argv({"/bin/ciq-tuner", "run", "--build", "make -C 'a b'", "--out=/x/y"}),
            "/bin/ciq-tuner run --build 'make -C '\\''a b'\\''' --out=/x/y");
  EXPECT_EQ(shown_argv({"a\nb", ""}), "'a\\nb' ''");
}

TEST(RecordedRuns, gain_follows_the_direction_the_entry_was_tuned_in) {
  auto min = recorded_gain(entry("kernel", "maxrregcount = 64\n", "result = tuned\nobjective0 = ms\nbaseline0 = 100\ntuned0 = 80\n").record, "");
  EXPECT_EQ(min.lower_is_better, 1);
  EXPECT_DOUBLE_EQ(min.gain(), 0.2);
  EXPECT_DOUBLE_EQ(relative_gain(100, 120, min.lower_is_better), -0.2); // slower now: a loss
  auto max = recorded_gain(
      entry("kernel", "maxrregcount = 64\n", "result = tuned\nobjective0 = a\nobjective1 = gflops\nbaseline0 = 1\ntuned0 = 1\nbaseline1 = 50\ntuned1 = 60\n").record,
      "gflops");
  EXPECT_EQ(max.objective, "gflops");
  EXPECT_EQ(max.lower_is_better, -1);
  EXPECT_DOUBLE_EQ(max.gain(), 0.2);
  // No gain, or none recorded: nothing to say which way is better.
  auto none = recorded_gain(entry("kernel", "", "result = no-gain\nobjective0 = ms\nbaseline0 = 100\ntuned0 = 100\n").record, "");
  EXPECT_TRUE(std::isnan(none.gain()));
  EXPECT_DOUBLE_EQ(relative_gain(100, 90, 0), 0.1);
  EXPECT_TRUE(std::isnan(relative_gain(0, 1, 1)));
  EXPECT_EQ(gain_text(0.2), "20.0 %");
  EXPECT_EQ(gain_text(-0.05), "-5.0 %");
  EXPECT_EQ(gain_text(NAN), "-");
}

TEST(RecordedRuns, run_controls_joins_kernel_and_unit_entries) {
  std::vector<RecordedEntry> entries{
      entry("kernel", "space = ptxas-13\nmaxrregcount = 64\n_Z1kv:maxnreg = 128\n"),
      entry("kernel", "space = ptxas-13\nmaxrregcount = 64\n_Z1jv:maxnreg = 96\n"),
      entry("unit", "space = nvcc-13\nfmad = 0\n"),
      entry("kernel", ""), // tuned with no gain: adds nothing
  };
  auto set = run_controls(entries);
  EXPECT_EQ(set.space, "ptxas-13");
  EXPECT_EQ(set.options, (std::map<std::string, std::string>{{"maxrregcount", "64"}}));
  EXPECT_EQ(set.kernels.at("_Z1kv").at("maxnreg"), "128");
  EXPECT_EQ(set.kernels.at("_Z1jv").at("maxnreg"), "96");
  EXPECT_EQ(set.nvcc_space, "nvcc-13");
  EXPECT_EQ(set.nvcc, (std::map<std::string, std::string>{{"fmad", "0"}}));
}
