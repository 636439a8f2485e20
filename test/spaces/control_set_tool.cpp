// The C++ side of control sets, for the test that the Python package reads
// them the same way (test/tools/control_round_trip.py):
//
//   ciq-test-controls write ASSIGNMENT...  the set these KNOB=VALUE,
//                                          KERNEL:KNOB=VALUE, nvcc.KNOB=VALUE
//                                          make, as format_control_set writes it
//   ciq-test-controls read FILE            the set FILE holds, one
//                                          "FIELD KEY VALUE" line per setting,
//                                          KEY and VALUE in hex (any bytes)
//
// Exit status 1 with the error on stderr when the assignment or text is
// refused; 2 on a usage error.
#include "spaces/control_set.h"
#include "utils/files.h"
#include "utils/hash.h"

#include <cstdio>
#include <string>
#include <string_view>

using namespace ciq;

namespace {

std::string hex(std::string_view s) { return s.empty() ? "-" : bytes_to_hex(s); }

void line(const char* field, std::string_view key, std::string_view value) {
  std::printf("%s %s %s\n", field, hex(key).c_str(), hex(value).c_str());
}

int print_set(const spaces::ControlSet& set) {
  if (!set.space.empty()) line("space", "", set.space);
  for (const auto& [knob, value] : set.options) line("option", knob, value);
  for (const auto& [kernel, knobs] : set.kernels)
    for (const auto& [knob, value] : knobs) line("directive", kernel + ":" + knob, value);
  if (set.acf) line("acf", "", "sha256:" + to_hex(*set.acf));
  if (!set.nvcc_space.empty()) line("nvcc-space", "", set.nvcc_space);
  for (const auto& [knob, value] : set.nvcc) line("nvcc", knob, value);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string command = argc > 1 ? argv[1] : "";
  if (command == "write") {
    spaces::ControlSet set;
    for (int i = 2; i < argc; ++i)
      if (auto added = spaces::add_assignment(set, argv[i]); !added) {
        std::fprintf(stderr, "error: %s\n", added.error().message.c_str());
        return 1;
      }
    std::fputs(spaces::format_control_set(set).c_str(), stdout);
    return 0;
  }
  if (command == "read" && argc == 3) {
    auto text = read_file(argv[2]);
    if (!text) {
      std::fprintf(stderr, "error: %s\n", text.error().message.c_str());
      return 1;
    }
    auto set = spaces::parse_control_set(*text, argv[2]);
    if (!set) {
      std::fprintf(stderr, "error: %s\n", set.error().message.c_str());
      return 1;
    }
    return print_set(*set);
  }
  std::fprintf(stderr, "usage: %s write ASSIGNMENT... | read FILE\n", argv[0]);
  return 2;
}
