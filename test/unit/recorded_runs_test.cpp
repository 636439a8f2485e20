// Tests of tuner/commands/recorded_runs.h's pure parts: the arguments a
// run is started again with, the gains entries recorded, and a run's
// control set made whole again from its entries.
#include "tuner/commands/recorded_runs.h"
#include "tuner/rundir/command_line.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdio>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

// An entry of `kind` named `name` (a kernel, or a unit's file; a module
// has none) under the key `key`.
RecordedEntry named(const std::string& kind, const std::string& name, const std::string& key, const std::string& provenance = "") {
  std::string head = "format = ciq-record/1\nkind = " + kind + "\n" +
                     (kind == "unit" ? "unit = " + name + "\nnvcc = 13.0.88\n" : (name.empty() ? "" : "kernel = " + name + "\n") + "ptxas = 13.0.88\n") +
                     "target = sm_90a\n" + provenance + "[controls]\nformat = ciq-controls/1\n";
  auto r = cache::parse_record(head, "test");
  EXPECT_TRUE(r.ok()) << r.error().message;
  return RecordedEntry{key, r.ok() ? *r : cache::Record{}};
}

// What /bin/sh makes of `line` as printf's arguments: each word in [].
std::string sh_words(const std::string& line) {
  std::string script = "printf '[%s]' " + line, command = "/bin/sh -c '";
  for (char c : script) command += c == '\'' ? std::string("'\\''") : std::string(1, c);
  command += "'";
  FILE* p = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[256];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, p)) out.append(buffer, n);
  ::pclose(p);
  return out;
}

} // namespace

TEST(RecordedRuns, kernel_rows_give_one_row_per_kernel_with_the_run_s_other_entries) {
  // A run through ciq-nvcc: two kernels, two unit entries and the module
  // entry: two rows, every entry in exactly one.
  std::vector<RecordedEntry> run{named("unit", "/src/stencil3d.cu", "01"), named("kernel", "wave_step", "02"), named("module", "", "03"),
                                 named("unit", "/src/stencil3d.cu", "04"), named("kernel", "wave_init", "05")};
  auto rows = kernel_rows(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(entry_name(rows[0].front().record), "wave_step");
  ASSERT_EQ(rows[0].size(), 4u);
  EXPECT_EQ(rows[0][1].key, "01"); // units, then the module
  EXPECT_EQ(rows[0][2].key, "04");
  EXPECT_EQ(rows[0][3].key, "03");
  ASSERT_EQ(rows[1].size(), 1u);
  EXPECT_EQ(rows[1].front().key, "05");
  // No kernel entry: one row, led by a unit.
  auto units = kernel_rows({named("module", "", "03"), named("unit", "a.cu", "01")});
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(entry_name(units[0].front().record), "a.cu");
  EXPECT_EQ(units[0].size(), 2u);
  EXPECT_TRUE(kernel_rows({}).empty());
}

TEST(RecordedRuns, a_row_s_gain_is_the_first_its_entries_recorded) {
  // A run whose winner is an NVVM-stage knob: its kernel entry holds no
  // controls (no gain), its unit entry does.
  auto kernel = named("kernel", "rows", "02", "result = tuned\nobjective0 = regs\nbaseline0 = 40\ntuned0 = 30\n");
  auto unit = entry("unit", "space = nvcc-13\nfmad = 0\n", "result = tuned\nobjective0 = regs\nbaseline0 = 40\ntuned0 = 30\n");
  EXPECT_DOUBLE_EQ(row_recorded_gain({kernel, unit}, ""), 0.25);
  EXPECT_TRUE(std::isnan(row_recorded_gain({kernel}, "")));
  EXPECT_EQ(gain_json(0.25).dump(), "0.25");
  EXPECT_EQ(gain_json(NAN).dump(), "null");
  EXPECT_EQ(entry_json(kernel).dump(), R"({"key":"02","kind":"kernel","name":"rows"})");
}


// The options' grammar comes from the tool's parser (ciq-tuner: llvm::cl's
// registry and the options' help categories); here, a stand-in: run has
// these options, these take a separate value, these are in groups; the
// campaign has one more (--cover) that run does not.
static OptionFacts stand_in_facts(std::string_view sub, std::string_view name) {
  static const std::vector<std::string_view> valued{"build", "out", "cache-dir", "budget", "kernels"};
  static const std::vector<std::string_view> flags{"json", "no-ship", "separately"};
  auto in = [&](const std::vector<std::string_view>& v) { return std::find(v.begin(), v.end(), name) != v.end(); };
  OptionFacts f;
  f.registered = in(valued) || in(flags) || (sub == "campaign" && name == "cover");
  f.takes_value = in(valued) || name == "cover";
  if (name == "out" || name == "json") f.groups = group_output;
  if (name == "build") f.groups = group_program;
  if (name == "kernels" || name == "separately") f.groups = group_kernels;
  if (name == "no-ship") f.groups = group_shipping;
  return f;
}

TEST(RecordedRuns, forward_arguments_drops_by_group_with_their_values) {
  set_option_grammar(stand_in_facts);
  std::vector<std::string> saved{"run", "--build", "make --out x", "--out", "old", "--json", "--cache-dir=/c", "-out=o2",
                                 "--budget", "24", "--json=false", "--no-ship", "--build", "--out"};
  // A value that looks like an option (the last --build's "--out") is its value.
  EXPECT_EQ(forward_arguments(saved, "run", "run", group_output),
            (std::vector<std::string>{"run", "--build", "make --out x", "--cache-dir=/c", "--budget", "24", "--no-ship", "--build",
                                      "--out"}));
  EXPECT_EQ(forward_arguments(saved, "run", "run", group_program).size(), saved.size() - 4);
  // What the forwarder sets replaces what was given, in any spelling.
  EXPECT_EQ(forward_arguments({"--budget=3", "--cache-dir", "/a", "--json"}, "run", "run", group_none, {"--cache-dir", "/b"}),
            (std::vector<std::string>{"--budget=3", "--json", "--cache-dir", "/b"}));
  // The options that the receiving subcommand does not have stay behind,
  // with no list of them anywhere: a campaign's --cover, for its runs.
  EXPECT_EQ(forward_arguments({"--cover", "80%", "--budget", "8", "--kernels", "k*", "--no-ship"}, "campaign", "run", group_kernels),
            (std::vector<std::string>{"--budget", "8", "--no-ship"}));
  // One that neither has (from another version) goes on, to be refused there.
  EXPECT_EQ(forward_arguments({"--bogus", "--budget", "8"}, "run", "run", group_none), (std::vector<std::string>{"--bogus", "--budget", "8"}));
  auto parsed = parse_arguments({"run", "--budget", "3", "--json", "x"}, "run");
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(parsed[1].name, "budget");
  EXPECT_EQ(parsed[1].count, 2u);
  EXPECT_EQ(parsed[1].value, "3");
  EXPECT_EQ(parsed[2].name, "json");
  EXPECT_EQ(parse_arguments({"--out=d"}, "run").front().value, "d");
  EXPECT_EQ(parsed[3].name, "");  // an operand
  // A saved flag reads as LLVM's parser read it (reverify's --separately
  // took "True" for off before).
  for (const char* on : {"--separately", "--separately=true", "--separately=True", "--separately=TRUE", "--separately=1"})
    EXPECT_TRUE(parse_arguments({on}, "run").front().flag_on()) << on;
  for (const char* off : {"--separately=false", "--separately=False", "--separately=FALSE", "--separately=0"})
    EXPECT_FALSE(parse_arguments({off}, "run").front().flag_on()) << off;
  // After "--", a program's own words: none is an option, none is dropped.
  EXPECT_EQ(forward_arguments({"--out", "d", "--", "./app", "--out", "x"}, "run", "run", group_output),
            (std::vector<std::string>{"--", "./app", "--out", "x"}));
  set_option_grammar(nullptr);
  // Without a grammar nothing is known of the options: only `set` replaces.
  EXPECT_EQ(forward_arguments({"--out", "--json"}, "run", "run", group_output, {"--json"}), (std::vector<std::string>{"--out", "--json"}));
}

TEST(RecordedRuns, shown_argv_quotes_for_any_posix_sh) {
  EXPECT_EQ(shown_argv({"/bin/ciq-tuner", "run", "--build", "make -C 'a b'", "--out=/x/y"}),
            "/bin/ciq-tuner run --build 'make -C '\\''a b'\\''' --out=/x/y");
  // A control character is not printed; sh makes it again from printf's octal escape.
  std::string esc = "a\x1b[31mred 'q'";
  std::string line = shown_argv({esc, "", "tab\there", "bad\xff", "caf\xc3\xa9", "rtl\xe2\x80\xae" "evil"});
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
  EXPECT_EQ(line.find("$'"), std::string::npos); // bash's quoting, not POSIX sh's
  EXPECT_EQ(line.substr(0, 40), "'a'\"$(printf '\\033')\"'[31mred '\\''q'\\'''");
  EXPECT_TRUE(is_printable(line));
  EXPECT_EQ(sh_words(line), "[" + esc + "][][tab\there][bad\xff][caf\xc3\xa9][rtl\xe2\x80\xae" "evil]");
  // A newline stands inside '...': "$(printf '\012')" would lose one that
  // ends a word (an outside tester's directory name did).
  EXPECT_EQ(sh_words(shown_argv({"/tmp/nl\n", "a\nb"})), "[/tmp/nl\n][a\nb]");
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
