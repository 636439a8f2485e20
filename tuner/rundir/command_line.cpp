#include "tuner/rundir/command_line.h"

#include "utils/files.h"
#include "utils/redis.h"

namespace ciq::tuner {

std::vector<std::string> without_publish_password(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool value_next = false; // the previous argument was --publish: this is its URL
  for (const auto& a : args) {
    std::string name = a.substr(0, a.find('='));
    bool named = name == "--publish" || name == "-publish";
    if (value_next) out.push_back(redact_secrets(a));
    else if (named && a.size() > name.size()) out.push_back(name + "=" + redact_secrets(a.substr(name.size() + 1)));
    else out.push_back(a);
    value_next = named && a == name;
  }
  return out;
}

Result<void> save_command_line(const std::string& dir, const std::vector<std::string>& args) {
  std::string saved;
  for (const auto& a : without_publish_password(args)) saved += a + "\n";
  // 0600: the commands in it may hold tokens of their own.
  return write_file_atomic(join_path(dir, "command-line"), saved, 0600);
}

} // namespace ciq::tuner
