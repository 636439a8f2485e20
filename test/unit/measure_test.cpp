// Tests of tuner/measure: benchmark and build commands (words, placeholders,
// shell quoting, failure messages) and the evaluator's numbering of a
// resumed run.
#include "tuner/measure/command.h"
#include "tuner/measure/evaluator.h"
#include "tuner/objectives/objectives.h"
#include "tuner/rundir/journal.h"
#include "tuner/search/candidate.h"
#include "utils/files.h"

#include <cstdio>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

TEST(Command, words_split_like_a_shell_without_expanding) {
  auto w = split_words("cmake --build 'dir with space' -- \"VERBOSE=1\" a\\ b $HOME");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, (std::vector<std::string>{"cmake", "--build", "dir with space", "--", "VERBOSE=1", "a b", "$HOME"}));
  EXPECT_FALSE(split_words("echo 'open").ok());
  EXPECT_FALSE(split_words("   ").ok());
}

TEST(Command, several_lines_are_refused_without_a_shell) {
  // A shell would run each line as a command; as words they would be one.
  auto w = split_words("nvcc -c a.cu -o a.o\nnvcc -c b.cu -o b.o");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("--shell"), std::string::npos);
  // A trailing newline, and a backslash continuing a line, are one command.
  EXPECT_EQ(*split_words("make -j4\n"), (std::vector<std::string>{"make", "-j4"}));
  EXPECT_EQ(*split_words("nvcc -c a.cu \\\n  -o a.o"), (std::vector<std::string>{"nvcc", "-c", "a.cu", "-o", "a.o"}));
  // Inside quotes a newline is part of the word.
  EXPECT_EQ(*split_words("printf 'a\nb'"), (std::vector<std::string>{"printf", "a\nb"}));
}

TEST(Command, placeholders) {
  std::map<std::string, std::string> v{{"workdir", "/w"}, {"controls", "/w/c"}, {"gpu", "1"}, {"param:x", "2.5"}};
  EXPECT_EQ(*fill_placeholders("{workdir}/b --x={param:x} gpu{gpu}", v), "/w/b --x=2.5 gpu1");
  EXPECT_EQ(*fill_placeholders("awk '{print $1}'", v), "awk '{print $1}'"); // not a placeholder
  EXPECT_FALSE(fill_placeholders("{param:y}", v).ok());
  auto sh = command_argv("make -C {workdir} && ./run", v, true);
  ASSERT_TRUE(sh.ok());
  EXPECT_EQ(*sh, (std::vector<std::string>{"/bin/sh", "-c", "make -C '/w' && ./run"}));
}

TEST(Command, shell_quoted_values_are_one_literal_word) {
  EXPECT_EQ(shell_quoted("/w"), "'/w'");
  EXPECT_EQ(shell_quoted(""), "''");
  EXPECT_EQ(shell_quoted("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quoted("$(touch PWNED) `id` \"x\" \\ a\nb"), "'$(touch PWNED) `id` \"x\" \\ a\nb'");
}

// Each value, wherever the template puts it, reaches the shell as literal
// text: the shell's own reading of the filled command (printf '[%s]' per
// word) gives back exactly the value, and nothing in it runs.
static std::string shell_words(const std::string& command) {
  FILE* p = ::popen(("/bin/sh -c " + shell_quoted("printf '[%s]' " + command)).c_str(), "r");
  std::string out;
  char buf[256];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(Command, shell_placeholders_are_quoted_for_their_context) {
  const std::string nasty = "a b'c\"d$(echo RAN)`echo RAN`\\e\n$HOME *";
  std::map<std::string, std::string> v{{"workdir", "/w d"}, {"param:x", nasty}, {"param:n", "41"}};
  auto words = [&](const std::string& t) {
    auto filled = fill_shell_placeholders(t, v);
    EXPECT_TRUE(filled.ok()) << t;
    return filled ? shell_words(*filled) : "";
  };
  EXPECT_EQ(words("{param:x}"), "[" + nasty + "]");
  EXPECT_EQ(words("--out={workdir}/x"), "[--out=/w d/x]");                // inside a word
  EXPECT_EQ(words("'{workdir}/x'"), "[/w d/x]");                          // already single-quoted
  EXPECT_EQ(words("'--x={param:x}!'"), "[--x=" + nasty + "!]");
  EXPECT_EQ(words("\"{param:x} $((1+1))\""), "[" + nasty + " 2]");         // already double-quoted
  EXPECT_EQ(words("\"$(printf %s '{param:x}')\""), "[" + nasty + "]");    // quotes inside $( ) inside "..."
  EXPECT_EQ(words("$(printf %s {param:x} | wc -c)"), "[" + std::to_string(nasty.size()) + "]");
  EXPECT_EQ(words("'{print $1}' {workdir}"), "[{print $1}][/w d]");                  // not a placeholder
  EXPECT_EQ(words("x # it's a comment {workdir}\nprintf '[%s]' {workdir}"), "[x][/w d]"); // its quote opens nothing
  EXPECT_EQ(words("$(( {param:n} + (1) )) \"$(({param:n}*2))\""), "[42][82]");    // arithmetic: numbers as they are
  EXPECT_FALSE(fill_shell_placeholders("$(( {param:x} + 1 ))", v).ok());          // and nothing else
  EXPECT_FALSE(fill_shell_placeholders("`ls {workdir}`", v).ok());
  EXPECT_FALSE(fill_shell_placeholders("${X:-{workdir}}", v).ok());
  EXPECT_FALSE(fill_shell_placeholders("echo '{workdir}", v).ok());
  EXPECT_FALSE(fill_shell_placeholders("echo {param:nope}", v).ok());
}

TEST(Command, failure_message_shows_the_tools_error_lines_and_the_log) {
  EXPECT_EQ(failure_message("build exit status 1", "", "/r/build.log"), "build exit status 1 (log: /r/build.log)");
  std::string one = failure_message("build exit status 1", "k.cu:1:10: fatal error: x.h: No such file or directory\ncompilation terminated.\n",
                                    "/r/build.log");
  EXPECT_EQ(one, "build exit status 1: k.cu:1:10: fatal error: x.h: No such file or directory (log: /r/build.log)\n"
                 "  | k.cu:1:10: fatal error: x.h: No such file or directory\n  | compilation terminated.");
  std::string many;
  for (int i = 0; i < 30; ++i) many += (i == 15 ? "k.cu(9): error: bad thing" : "line " + std::to_string(i)) + "\n";
  std::string m = failure_message("build exit status 2", many, "L");
  EXPECT_EQ(m.substr(0, m.find('\n')), "build exit status 2: k.cu(9): error: bad thing (log: L)");
  EXPECT_NE(m.find("  | line 0\n  | line 1\n  | line 2\n  | line 3\n  | ...\n  | k.cu(9): error: bad thing\n  | ...\n  | line 26"),
            std::string::npos) << m;
  EXPECT_NE(m.find("  | line 29"), std::string::npos);
  EXPECT_EQ(m.find("line 10"), std::string::npos);
}

// A parallel run killed while evaluation 1 was in flight and 2 had finished
// leaves a journal with 0 and 2: the resumed run gives the next candidate
// number 1, then 3, so the journal reads 0..N-1 (found by kill_resume.py).
TEST(Evaluator, resumed_run_fills_the_numbers_a_killed_run_left_free) {
  auto dir = ciq::ScratchDir::create("ciq-evaluator-test").value();
  SearchSpace s;
  s.dimensions = {*parse_param("x=choice:1,2,3,4")};
  TuningSetup setup;
  setup.bench = "echo f=1";
  setup.objectives = {*metric_objective("f=([0-9]+)")};
  setup.repeats = 1;
  setup.compiler = false;
  setup.run_dir = dir.path();
  Evaluator e(setup, s);
  auto with_x = [&](int gene) {
    Candidate c = s.default_candidate();
    c.genes[0] = gene;
    return c;
  };
  std::vector<EvalRecord> journal(2);
  journal[0].number = 0;
  journal[0].candidate = s.canonical(with_x(0));
  journal[1].number = 2;
  journal[1].candidate = s.canonical(with_x(2));
  for (auto& r : journal) r.status = EvalStatus::ok;
  e.preload(journal);
  e.evaluate_batch({with_x(1), with_x(3)}, 0);
  std::vector<int> numbers;
  for (const auto& r : e.records()) numbers.push_back(r.number);
  EXPECT_EQ(numbers, (std::vector<int>{0, 2, 1, 3}));
}

// A here-document's body takes no quoting, so no placeholder is filled from
// a `<<` on; a here-string (`<<<`) is a word like any other.
TEST(Command, no_placeholder_after_a_here_document) {
  std::map<std::string, std::string> v{{"param:x", "$(touch PWNED)"}, {"workdir", "/w"}};
  for (const char* t : {"cat > f <<EOF\n{param:x}\nEOF\necho v=1", "cat <<-'EOF' > f\n{param:x}\nEOF",
                        "x=$(cat <<EOF\n{workdir}\nEOF\n)", "cat <<EOF\nEOF\nbench {param:x}"}) {
    auto filled = fill_shell_placeholders(t, v);
    ASSERT_FALSE(filled.ok()) << t;
    EXPECT_NE(filled.error().message.find("here-document"), std::string::npos) << filled.error().message;
  }
  auto before = fill_shell_placeholders("bench {param:x} <<EOF\nliteral\nEOF", v);
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(*before, "bench '$(touch PWNED)' <<EOF\nliteral\nEOF");
  auto here_string = fill_shell_placeholders("cat <<< {param:x}", v);
  ASSERT_TRUE(here_string.ok()) << here_string.error().message;
  EXPECT_EQ(*here_string, "cat <<< '$(touch PWNED)'");
  auto quoted = fill_shell_placeholders("echo '<<' {workdir}", v);
  ASSERT_TRUE(quoted.ok()) << quoted.error().message;
  EXPECT_EQ(*quoted, "echo '<<' '/w'");
}

// What the quoting does not follow, or where the shell reads a value twice,
// is refused: a `case` in $(...) (its ')' would end the $( ) in ciq's
// reading), eval, a nested sh -c. Words that only contain them are not.
TEST(Command, placeholders_refused_where_the_shell_reads_them_again) {
  std::map<std::string, std::string> v{{"param:x", "$(touch PWNED)"}, {"workdir", "/w"}};
  for (const char* t : {R"T(echo "$(case a in a) echo "{workdir}";; esac)")T", "eval echo {param:x}",
                        "sh -c 'echo {param:x}'", "/bin/bash -c \"run {workdir}\""}) {
    auto filled = fill_shell_placeholders(t, v);
    ASSERT_FALSE(filled.ok()) << t;
    EXPECT_NE(filled.error().message.find("must not use"), std::string::npos) << filled.error().message;
  }
  for (const char* t : {"make -C /home/me/case {workdir}", "./evaluate.sh {workdir}", "echo $((1<<2)) {param:x}"})
    EXPECT_TRUE(fill_shell_placeholders(t, v).ok()) << t;
  EXPECT_TRUE(fill_shell_placeholders("case a in a) echo hi;; esac", v).ok());  // no placeholder: nothing to quote
}
