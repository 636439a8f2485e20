// utils/cli: what ciq's LLVM-based tools read from llvm::cl's registry.
#include "utils/cli/parse.h"

#include <gtest/gtest.h>
#include <llvm/Support/CommandLine.h>

namespace cl = llvm::cl;

namespace {
// A subcommand of this test binary with one option of each kind.
cl::SubCommand test_cmd("ciq-unit-cli", "options of each kind");
cl::OptionCategory group("Group of the test");
cl::opt<std::string> text("text", cl::sub(test_cmd), cl::desc("a value"), cl::cat(group));
cl::list<std::string> many("many", cl::sub(test_cmd), cl::desc("values"));
cl::opt<int> number("number", cl::sub(test_cmd), cl::desc("a number"));
cl::opt<bool> flag("flag", cl::sub(test_cmd), cl::desc("a flag"));
cl::opt<std::string> optional("optional", cl::sub(test_cmd), cl::ValueOptional, cl::desc("a value, maybe"));
// (An alias takes its option's subcommand: LLVM refuses cl::sub() on one.)
cl::alias short_text("t", cl::aliasopt(text), cl::desc("alias of --text"));
} // namespace

// Which options take the next argument as their value, and in which
// groups an option is, are the parser's own answers: ciq-tuner's forwarding
// of its arguments (tuner/rundir's forward_arguments) keeps no list of them.
TEST(Cli, registered_option_reads_the_registry) {
  auto takes_value = [](std::string_view sub, std::string_view name) {
    auto option = ciq::cli::registered_option(sub, name);
    return option && option->takes_separate_value;
  };
  for (const char* name : {"text", "many", "number", "t"}) EXPECT_TRUE(takes_value("ciq-unit-cli", name)) << name;
  for (const char* name : {"flag", "optional"}) EXPECT_FALSE(takes_value("ciq-unit-cli", name)) << name;
  EXPECT_FALSE(ciq::cli::registered_option("ciq-unit-cli", "nosuch"));
  EXPECT_TRUE(ciq::cli::registered_option("ciq-unit-cli", "flag"));
  EXPECT_FALSE(ciq::cli::registered_option("", "text"));  // not at the top level
  EXPECT_EQ(ciq::cli::registered_option("ciq-unit-cli", "text")->categories, std::vector<std::string>{"Group of the test"});
  EXPECT_EQ(ciq::cli::registered_option("ciq-unit-cli", "flag")->categories, std::vector<std::string>{"General options"});
}
