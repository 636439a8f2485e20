#include "utils/cli/parse.h"

#include "utils/cli/help.h"
#include "utils/text.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unistd.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

namespace ciq::cli {

std::optional<std::string> parse_command_line(int argc, const char* const* argv, const char* overview) {
  if (print_subcommand_help(argc, argv)) {
    std::fflush(stdout);
    std::exit(0); // as LLVM's own --help
  }
  // The overview is the tool's, for `<tool> --help`: LLVM would print it
  // before a subcommand's --help-list too.
  bool subcommand = argc > 1 && argv[1][0] != '-';
  for (const llvm::cl::SubCommand* sub : llvm::cl::getRegisteredSubcommands())
    if (subcommand && sub->getName() == argv[1]) overview = "";
  std::string said;
  llvm::raw_string_ostream errs(said);
  // Some of LLVM's messages (a bad option value) go to llvm::errs() whatever
  // stream it is given: stderr itself is caught while parsing.
  std::fflush(stderr);
  llvm::errs().flush();
  int saved = ::dup(2);
  std::FILE* caught = std::tmpfile();
  if (saved >= 0 && caught) ::dup2(::fileno(caught), 2);
  bool ok = llvm::cl::ParseCommandLineOptions(argc, argv, overview, &errs);
  llvm::errs().flush();
  std::fflush(stderr);
  if (saved >= 0 && caught) {
    ::dup2(saved, 2);
    std::rewind(caught);
    char buffer[4096];
    std::string direct;
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, caught)) > 0;) direct.append(buffer, n);
    if (ok) std::fwrite(direct.data(), 1, direct.size(), stderr); // warnings, if any: as they were
    else said = direct + said;
  }
  if (saved >= 0) ::close(saved);
  if (caught) std::fclose(caught);
  errs.flush();
  if (ok) return std::nullopt;
  return said;
}

std::optional<RegisteredOption> registered_option(std::string_view subcommand, std::string_view name) {
  llvm::cl::SubCommand* in = &*llvm::cl::TopLevelSubCommand;
  for (llvm::cl::SubCommand* sub : llvm::cl::getRegisteredSubcommands())
    if (!subcommand.empty() && sub->getName() == llvm::StringRef(subcommand.data(), subcommand.size())) in = sub;
  const auto& options = llvm::cl::getRegisteredOptions(*in);
  auto it = options.find(llvm::StringRef(name.data(), name.size()));
  if (it == options.end()) return std::nullopt;
  RegisteredOption option;
  option.takes_separate_value = it->second->getValueExpectedFlag() == llvm::cl::ValueRequired;
  for (const llvm::cl::OptionCategory* category : it->second->Categories) option.categories.push_back(category->getName().str());
  return option;
}

std::string report_parse_errors(const std::string& tool, const std::string& text) {
  bool first = true;
  std::string error;
  for (std::string_view line : split(text, '\n')) {
    line = trim(line);
    if (line.empty()) continue;
    // "ciq-cache: Unknown ..." or "ciq-cache import: Not enough ...": LLVM's
    // own prefix goes (unless the colon is inside a quoted argument).
    if (starts_with(line, tool)) {
      auto colon = line.find(": ");
      if (colon != std::string_view::npos && line.substr(0, colon).find('\'') == std::string_view::npos)
        line = line.substr(colon + 2);
    }
    std::cerr << tool << ": " << (first ? "error: " : "note: ") << line << "\n";
    if (first) error = std::string(line);
    first = false;
  }
  if (first) {
    error = "bad command line; run '" + tool + " --help'";
    std::cerr << tool << ": error: " << error << "\n";
  }
  return error;
}

} // namespace ciq::cli
