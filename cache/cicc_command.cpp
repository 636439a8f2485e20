#include "cache/cicc_command.h"

#include "utils/text.h"

#include <algorithm>
#include <cctype>

namespace ciq::cache {

namespace {

// Options nvcc 13.0 gives cicc with their value in the next argument; the
// file-naming ones stay out of keys.
struct ValueOption {
  std::string_view name;
  bool names_file;
};
constexpr ValueOption k_value_options[] = {
    {"--orig_src_file_name", true}, {"--orig_src_path_name", true}, {"--include_file_name", true},
    {"--module_id_file_name", true}, {"--gen_c_file_name", true},   {"--stub_file_name", true},
    {"--gen_device_file_name", true}, {"-o", true},                  {"-olto", true},
    {"-nvvmir-library", true},        {"-arch", false},              {"-maxreg", false},
};

const ValueOption* value_option(std::string_view arg) {
  for (const auto& o : k_value_options)
    if (arg == o.name) return &o;
  return nullptr;
}

// What two arguments must share to be the same option: "-ftz" for
// "-ftz=1", "-O" for "-O2", the whole argument for a flag.
std::string_view option_family(std::string_view arg) {
  if (arg.size() == 3 && arg[0] == '-' && arg[1] == 'O' && std::isdigit(static_cast<unsigned char>(arg[2])))
    return arg.substr(0, 2);
  return arg.substr(0, arg.find('='));
}

} // namespace

std::string CiccCommand::canonical_flags() const {
  std::string out;
  for (const auto& f : flags) out += (out.empty() ? "" : " ") + f;
  return out;
}

Result<CiccCommand> scan_cicc_args(const std::vector<std::string>& args) {
  CiccCommand command;
  int inputs = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (const ValueOption* o = value_option(a)) {
      if (i + 1 >= args.size()) return make_error("parse", "cicc option " + a + " has no value");
      const std::string& v = args[++i];
      if (a == "-o") command.output = v;
      else if (a == "-arch") command.target = v;
      else if (a == "--orig_src_file_name") command.unit = v;
      else if (a == "--orig_src_path_name") command.source_path = v;
      if (!o->names_file) {
        command.flags.push_back(a);
        command.flags.push_back(v);
      }
    } else if (a == "--gen_module_id_file") {
      // -cubin and -ptx builds have cicc write the module id file that
      // cudafe++ writes in -c builds: who writes it, not what the PTX is.
      // Out of the key, so that a -cubin tuning's entry hits the -c build.
    } else if (!a.empty() && a[0] == '-') {
      command.flags.push_back(a);
    } else {
      ++inputs;
      command.input = a;
      command.input_index = i;
    }
  }
  if (inputs != 1) return make_error("parse", "cicc got " + std::to_string(inputs) + " inputs, expected one");
  if (command.target.empty()) return make_error("parse", "cicc got no -arch");
  return command;
}

std::string normalise_cicc_input(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end == std::string_view::npos ? text.size() : end + 1);
    text.remove_prefix(line.size());
    bool marker = line.size() > 2 && line[0] == '#' && line[1] == ' ' && std::isdigit(static_cast<unsigned char>(line[2]));
    if (!marker) out += line;
  }
  return out;
}

Hash128 unit_key(std::string_view normalised_input, const CiccCommand& command, std::string_view identity) {
  Hasher h;
  h.add_field("ciq-key/1");
  h.add_field("unit");
  h.add_field(normalised_input);
  h.add_field(command.target);
  h.add_field(identity);
  h.add_field(command.canonical_flags());
  return h.digest();
}

std::vector<std::string> apply_cicc_options(const std::vector<std::string>& args, const CiccCommand& command,
                                            const std::vector<std::string>& rendered) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i == command.input_index) out.insert(out.end(), rendered.begin(), rendered.end());
    bool replaced = value_option(args[i]) == nullptr &&
                    std::any_of(rendered.begin(), rendered.end(),
                                [&](const std::string& r) { return option_family(r) == option_family(args[i]); });
    if (value_option(args[i]) && i + 1 < args.size()) {
      out.push_back(args[i]);
      out.push_back(args[++i]);
    } else if (!replaced) {
      out.push_back(args[i]);
    }
  }
  return out;
}

} // namespace ciq::cache
