#include "cache/ptxas_command.h"

#include "utils/files.h"
#include "utils/text.h"

#include <array>

namespace ciq::cache {

namespace {

enum class Role {
  codegen,      // part of the key
  ignore,       // no effect on generated code (diagnostics, verbosity)
  target,
  output,
  input_string,
  options_file,
  info,         // ptxas prints something and compiles nothing
  user_controls,
  verbose,
};

struct OptionInfo {
  std::string_view long_name;
  std::string_view short_name;
  bool takes_value;
  Role role;
};

// ptxas 13.0 `--help`, plus the hidden --apply-controls/--query-controls.
constexpr std::array k_options = {
    OptionInfo{"Ofast-compile", "Ofc", true, Role::codegen},
    OptionInfo{"allow-expensive-optimizations", "allow-expensive-optimizations", true, Role::codegen},
    OptionInfo{"compile-as-tools-patch", "astoolspatch", false, Role::codegen},
    OptionInfo{"compile-only", "c", false, Role::codegen},
    OptionInfo{"compiler-annotations", "annotate", false, Role::ignore},
    OptionInfo{"def-load-cache", "dlcm", true, Role::codegen},
    OptionInfo{"def-store-cache", "dscm", true, Role::codegen},
    OptionInfo{"device-debug", "g", false, Role::codegen},
    OptionInfo{"device-function-maxrregcount", "func-maxrregcount", true, Role::codegen},
    OptionInfo{"device-stack-protector", "device-stack-protector", true, Role::codegen},
    OptionInfo{"disable-optimizer-constants", "disable-optimizer-consts", false, Role::codegen},
    OptionInfo{"disable-warnings", "w", false, Role::ignore},
    OptionInfo{"dont-merge-basicblocks", "no-bb-merge", false, Role::codegen},
    OptionInfo{"entry", "e", true, Role::codegen},
    OptionInfo{"extensible-whole-program", "ewp", false, Role::codegen},
    OptionInfo{"fmad", "fmad", true, Role::codegen},
    OptionInfo{"force-load-cache", "flcm", true, Role::codegen},
    OptionInfo{"force-store-cache", "fscm", true, Role::codegen},
    OptionInfo{"g-tensor-memory-access-check", "g-tmem-access-check", false, Role::codegen},
    OptionInfo{"generate-line-info", "lineinfo", false, Role::ignore},
    OptionInfo{"gno-tensor-memory-access-check", "gno-tmem-access-check", false, Role::codegen},
    OptionInfo{"gpu-name", "arch", true, Role::target},
    OptionInfo{"help", "h", false, Role::info},
    OptionInfo{"input-as-string", "ias", true, Role::input_string},
    OptionInfo{"legacy-bar-warp-wide-behavior", "legacy-bar-warp-wide-behavior", false, Role::codegen},
    OptionInfo{"list-version", "version-ls", false, Role::info},
    OptionInfo{"machine", "m", true, Role::codegen},
    OptionInfo{"make-errors-visible-at-exit", "make-errors-visible-at-exit", false, Role::ignore},
    OptionInfo{"maxntid", "maxntid", true, Role::codegen},
    OptionInfo{"maxrregcount", "maxrregcount", true, Role::codegen},
    OptionInfo{"minnctapersm", "minnctapersm", true, Role::codegen},
    OptionInfo{"opt-level", "O", true, Role::codegen},
    OptionInfo{"optimize-float-atomics", "opt-fp-atomics", false, Role::codegen},
    OptionInfo{"options-file", "optf", true, Role::options_file},
    OptionInfo{"output-file", "o", true, Role::output},
    OptionInfo{"override-directive-values", "override-directive-values", false, Role::codegen},
    OptionInfo{"position-independent-code", "pic", true, Role::codegen},
    OptionInfo{"preserve-relocs", "preserve-relocs", false, Role::codegen},
    OptionInfo{"register-usage-level", "regUsageLevel", true, Role::codegen},
    OptionInfo{"return-at-end", "ret-end", false, Role::codegen},
    OptionInfo{"sanitize", "sanitize", true, Role::codegen},
    OptionInfo{"sp-bounds-check", "sp-bounds-check", false, Role::codegen},
    OptionInfo{"split-compile", "split-compile", true, Role::ignore},
    OptionInfo{"suppress-async-bulk-multicast-advisory-warning", "suppress-async-bulk-multicast-advisory-warning", false, Role::ignore},
    OptionInfo{"suppress-debug-info", "suppress-debug-info", false, Role::codegen},
    OptionInfo{"suppress-double-demote-warning", "suppress-double-demote-warning", false, Role::ignore},
    OptionInfo{"suppress-sparse-mma-advisory-info", "suppress-sparse-mma-advisory-info", false, Role::ignore},
    OptionInfo{"suppress-stack-size-warning", "suppress-stack-size-warning", false, Role::ignore},
    OptionInfo{"verbose", "v", false, Role::verbose},
    OptionInfo{"version", "V", false, Role::info},
    OptionInfo{"warn-on-double-precision-use", "warn-double-usage", false, Role::ignore},
    OptionInfo{"warn-on-local-memory-usage", "warn-lmem-usage", false, Role::ignore},
    OptionInfo{"warn-on-spills", "warn-spills", false, Role::ignore},
    OptionInfo{"warning-as-error", "Werror", false, Role::ignore},
    OptionInfo{"apply-controls", "apply-controls", true, Role::user_controls},
    OptionInfo{"query-controls", "query-controls", true, Role::ignore},
};

// Values equal to what ptxas does without the flag; they must not split keys.
bool is_default_value(std::string_view name, std::string_view value) {
  return (name == "machine" && value == "64") || (name == "opt-level" && value == "3") ||
         (name == "fmad" && value == "true") || (name == "Ofast-compile" && value == "0") ||
         (name == "register-usage-level" && value == "5");
}

const OptionInfo* find_option(std::string_view name) {
  for (const auto& o : k_options)
    if (o.long_name == name || o.short_name == name) return &o;
  return nullptr;
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
      else current += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!current.empty()) words.push_back(std::move(current)), current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

// Why a capture's compile.json may not give `arg` to ptxas (capture_ptxas_args).
Error refused_in_capture(const std::string& arg, const std::string& why) {
  return make_error("invalid", "\"args\" may hold only ptxas' code generation options; '" + printable(arg) + "' " + why);
}

// `capture`: the words are a capture's compile.json "args" (another user's
// text): an input, an option naming a file, or one ptxas does not list is
// refused here, by the same reading of the words ptxas makes.
Result<void> scan_into(PtxasCommand& cmd, const std::vector<std::string>& args, bool from_file, int depth, bool capture = false) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const std::size_t first = i;  // an option's position, before its value is taken
    if (capture && (arg.size() < 2 || arg[0] != '-')) return refused_in_capture(arg, "names an input file");
    if (arg == "-") { // standard input: ptxas' to read; never a file called "-"
      if (from_file) return make_error("unsupported", "input file named inside an --options-file");
      cmd.inputs.push_back(PtxasInput{i, false, arg, true});
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (from_file) return make_error("unsupported", "input file named inside an --options-file");
      cmd.inputs.push_back(PtxasInput{i, false, arg});
      continue;
    }
    std::string_view body(arg);
    body.remove_prefix(body.size() > 2 && body[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (auto eq = body.find('='); eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
      body = body.substr(0, eq);
    }
    const OptionInfo* info = find_option(body);
    if (!info && body.size() > 1 && !value) { // -O3, -m64: value attached to a one-letter option
      const OptionInfo* one = find_option(body.substr(0, 1));
      if (one && one->takes_value && one->short_name.size() == 1) {
        info = one;
        value = std::string(body.substr(1));
      }
    }
    if (!info) {
      if (capture) return refused_in_capture(arg, "is not an option ptxas lists");
      cmd.codegen_flags[arg] = ""; // unknown: keep verbatim
      continue;
    }
    if (info->takes_value && !value) {
      // `-O 3` is not ptxas syntax (it reads "3" as an input); --opt-level 3 is.
      if ((body == "O" && info->short_name == "O") || i + 1 >= args.size())
        return make_error("parse", "option '" + arg + "' needs a value");
      value = args[++i];
    }
    if (capture) {
      switch (info->role) {
      case Role::output: return refused_in_capture(arg, "names an output file");
      case Role::options_file: return refused_in_capture(arg, "reads an options file");
      case Role::input_string: return refused_in_capture(arg, "gives ptxas its input");
      case Role::user_controls: return refused_in_capture(arg, "reads a controls file");
      case Role::info: return refused_in_capture(arg, "asks ptxas for information, not code");
      case Role::ignore:
        if (info->long_name == "query-controls") return refused_in_capture(arg, "writes a file");
        break;
      case Role::codegen: case Role::target: case Role::verbose: break;
      }
    }
    std::string name(info->long_name);
    switch (info->role) {
    case Role::codegen:
      if (value && is_default_value(name, *value)) cmd.codegen_flags.erase(name);
      else cmd.codegen_flags[name] = value.value_or("");
      break;
    case Role::ignore: break;
    case Role::verbose: cmd.verbose = true; break;
    case Role::target: cmd.target = *value; break;
    case Role::output:
      if (from_file) return make_error("unsupported", "-o inside an --options-file");
      cmd.output = *value;
      cmd.output_args.clear();
      for (std::size_t at = first; at <= i; ++at) cmd.output_args.push_back(at);
      break;
    case Role::input_string:
      if (from_file) return make_error("unsupported", "--input-as-string inside an --options-file");
      cmd.inputs.push_back(PtxasInput{i, true, *value});
      break;
    case Role::info: cmd.info_only = true; break;
    case Role::user_controls:
      cmd.user_controls = true;
      cmd.codegen_flags["apply-controls"] = "user";
      break;
    case Role::options_file: {
      if (depth > 2) return make_error("unsupported", "nested --options-file");
      cmd.uses_options_file = true;
      for (std::string_view file : split(*value, ',')) {
        // A pipe (/dev/stdin, <(...)) is ptxas' to read, not ours.
        auto text = read_file(std::string(file), 1 << 20);
        if (!text) return text.error();
        if (auto r = scan_into(cmd, words_of(*text), true, depth + 1); !r) return r;
      }
      break;
    }
    }
  }
  return {};
}

} // namespace

std::string PtxasCommand::canonical_flags() const {
  std::string out;
  for (const auto& [name, value] : codegen_flags) {
    if (!out.empty()) out += ' ';
    out += name;
    if (!value.empty()) out += "=" + value;
  }
  return out;
}

Result<PtxasCommand> scan_ptxas_args(const std::vector<std::string>& args) {
  PtxasCommand cmd;
  if (auto r = scan_into(cmd, args, false, 0); !r) return r.error();
  return cmd;
}

Result<std::vector<std::string>> capture_ptxas_args(const std::vector<std::string>& args) {
  // The tuner fills {workdir}, {gpu}, {controls}, {param:...} into the
  // commands these words go into: a brace would make a candidate's compile
  // differ from the reference's.
  for (const auto& arg : args)
    if (arg.find_first_of("{}") != std::string::npos) return refused_in_capture(arg, "holds a placeholder brace");
  PtxasCommand cmd;
  if (auto r = scan_into(cmd, args, true, 0, true); !r) return r.error();
  if (cmd.target.empty()) return make_error("invalid", "\"args\" names no target (-arch=sm_XX)");
  std::vector<std::string> out{"--gpu-name=" + cmd.target};
  for (const auto& [name, value] : cmd.codegen_flags) out.push_back("--" + name + (value.empty() ? "" : "=" + value));
  return out;
}

Result<std::map<std::string, std::string>> parse_codegen_flags(const std::string& flags) {
  PtxasCommand cmd;
  auto words = words_of(flags);
  if (auto r = scan_into(cmd, words, false, 0); !r) return r.error();
  if (!cmd.inputs.empty() || cmd.output || !cmd.target.empty() || cmd.info_only)
    return make_error("invalid", "--flags may hold only codegen options (no inputs, -o, -arch or --version)");
  return cmd.codegen_flags;
}

} // namespace ciq::cache
