// utils/cli: what ciq's LLVM-based tools read from llvm::cl's registry.
#include "utils/cli/parse.h"

#include <gtest/gtest.h>
#include <llvm/Support/CommandLine.h>

namespace cl = llvm::cl;

namespace {
// A subcommand of this test binary with one option of each kind.
cl::SubCommand test_cmd("ciq-unit-cli", "options of each kind");
cl::opt<std::string> text("text", cl::sub(test_cmd), cl::desc("a value"));
cl::list<std::string> many("many", cl::sub(test_cmd), cl::desc("values"));
cl::opt<int> number("number", cl::sub(test_cmd), cl::desc("a number"));
cl::opt<bool> flag("flag", cl::sub(test_cmd), cl::desc("a flag"));
cl::opt<std::string> optional("optional", cl::sub(test_cmd), cl::ValueOptional, cl::desc("a value, maybe"));
// (An alias takes its option's subcommand: LLVM refuses cl::sub() on one.)
cl::alias short_text("t", cl::aliasopt(text), cl::desc("alias of --text"));
} // namespace

// Which options take the next argument as their value is the parser's own
// answer: ciq-tuner's forwarding of its arguments (tuner/rundir's
// without_options) keeps no list of them.
TEST(Cli, takes_separate_value_reads_the_registered_options) {
  EXPECT_TRUE(ciq::cli::takes_separate_value("ciq-unit-cli", "text"));
  EXPECT_TRUE(ciq::cli::takes_separate_value("ciq-unit-cli", "many"));
  EXPECT_TRUE(ciq::cli::takes_separate_value("ciq-unit-cli", "number"));
  EXPECT_TRUE(ciq::cli::takes_separate_value("ciq-unit-cli", "t"));
  EXPECT_FALSE(ciq::cli::takes_separate_value("ciq-unit-cli", "flag"));
  EXPECT_FALSE(ciq::cli::takes_separate_value("ciq-unit-cli", "optional"));
  EXPECT_FALSE(ciq::cli::takes_separate_value("ciq-unit-cli", "nosuch"));
  EXPECT_FALSE(ciq::cli::takes_separate_value("", "text"));  // not at the top level
}
