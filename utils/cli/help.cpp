// A subcommand's --help (help.h), laid out as LLVM's categorized printer
// lays out its options, with the usage line first.
#include "utils/cli/help.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

namespace ciq::cli {

namespace {

namespace cl = llvm::cl;

// The subcommand argv[1] names; nullptr when none.
cl::SubCommand* named_subcommand(int argc, const char* const* argv) {
  if (argc < 2 || argv[1][0] == '-') return nullptr;
  for (cl::SubCommand* sub : cl::getRegisteredSubcommands())
    if (sub->getName() == argv[1]) return sub;
  return nullptr;
}

// 0: no help asked for; 1: --help; 2: --help-hidden. Options after "--" are
// the program's, not ours.
int help_asked(int argc, const char* const* argv) {
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return 0;
    if (a == "--help" || a == "-help" || a == "-h" || a == "--h") return 1;
    if (a == "--help-hidden" || a == "-help-hidden") return 2;
  }
  return 0;
}

} // namespace

bool print_subcommand_help(int argc, const char* const* argv) {
  cl::SubCommand* sub = named_subcommand(argc, argv);
  int asked = sub ? help_asked(argc, argv) : 0;
  if (!asked) return false;
  bool hidden = asked == 2;
  std::string tool = argv[0];
  tool = tool.substr(tool.rfind('/') + 1);
  llvm::raw_ostream& out = llvm::outs();
  out << "USAGE: " << tool << " " << sub->getName() << " [options]";
  for (const cl::Option* positional : sub->PositionalOpts) {
    if (positional->hasArgStr()) out << " --" << positional->ArgStr;
    out << " " << positional->HelpStr;
  }
  if (sub->ConsumeAfterOpt) out << " " << sub->ConsumeAfterOpt->HelpStr;
  out << "\n\n";
  if (!sub->getDescription().empty()) out << sub->getDescription() << "\n\n";
  // Each option once (an option is in the map under each of its names),
  // sorted by name, grouped by category with the categories sorted by name.
  std::vector<std::pair<std::string, cl::Option*>> options;
  std::set<cl::Option*> seen;
  for (auto& entry : sub->OptionsMap) {
    cl::Option* option = entry.second;
    auto flag = option->getOptionHiddenFlag();
    // LLVM unhides --help-list when it prints categories, as here.
    if (entry.getKey() == "help-list") flag = cl::NotHidden;
    if (flag == cl::ReallyHidden || (flag == cl::Hidden && !hidden)) continue;
    if (seen.insert(option).second) options.emplace_back(entry.getKey().str(), option);
  }
  std::sort(options.begin(), options.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t width = 0;
  for (const auto& [name, option] : options) width = std::max(width, option->getOptionWidth());
  std::vector<cl::OptionCategory*> categories;
  for (const auto& [name, option] : options)
    for (cl::OptionCategory* category : option->Categories)
      if (std::find(categories.begin(), categories.end(), category) == categories.end()) categories.push_back(category);
  std::sort(categories.begin(), categories.end(),
            [](const cl::OptionCategory* a, const cl::OptionCategory* b) { return a->getName() < b->getName(); });
  out << "OPTIONS:\n";
  for (const cl::OptionCategory* category : categories) {
    std::vector<const cl::Option*> in;
    for (const auto& [name, option] : options)
      if (std::find(option->Categories.begin(), option->Categories.end(), category) != option->Categories.end())
        in.push_back(option);
    if (in.empty()) continue;
    out << "\n" << category->getName() << ":\n\n";
    if (!category->getDescription().empty()) out << category->getDescription() << "\n\n";
    for (const cl::Option* option : in) option->printOptionInfo(width);
  }
  out.flush();
  return true;
}

} // namespace ciq::cli
