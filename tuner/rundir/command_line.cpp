#include "tuner/rundir/command_line.h"

#include "utils/files.h"
#include "utils/redis.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {

// The first line of a command-line file in the escaped format.
constexpr std::string_view k_format_line = "# ciq-tuner command line, format 2: one argument a line, \\\\ and \\n escaped";

} // namespace

Result<void> save_command_line(const std::string& dir, const std::vector<std::string>& args) {
  std::string saved = std::string(k_format_line) + "\n";
  for (const auto& a : without_publish_password(args)) {
    for (char c : a) {
      if (c == '\\') saved += "\\\\";
      else if (c == '\n') saved += "\\n";
      else saved += c;
    }
    saved += '\n';
  }
  // 0600: the commands in it may hold tokens of their own.
  return write_file_atomic(join_path(dir, "command-line"), saved, 0600);
}

Result<void> save_working_directory(const std::string& dir) {
  char here[4096];
  if (!::getcwd(here, sizeof here)) return make_error("io", std::string("cannot name the current directory: ") + std::strerror(errno));
  return write_file_atomic(join_path(dir, "working-directory"), std::string(here) + "\n");
}

std::vector<std::string> parse_command_line(std::string_view text) {
  std::vector<std::string> args;
  bool escaped = text.substr(0, text.find('\n')) == k_format_line;
  if (escaped) text.remove_prefix(std::min(text.size(), k_format_line.size() + 1));
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!escaped) {
      if (!line.empty()) args.emplace_back(line);
      continue;
    }
    std::string arg;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '\\' || line[i + 1] == 'n')) {
        arg += line[++i] == 'n' ? '\n' : '\\';
      } else {
        arg += line[i];
      }
    }
    args.push_back(std::move(arg));
  }
  return args;
}

std::string untrusted_run_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "missing" : std::string("unreadable: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != ::getuid()) return "another user's (uid " + std::to_string(st.st_uid) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    return std::string("writable by ") + ((st.st_mode & S_IWOTH) ? "other users" : "its group") + " (mode " + mode + ")";
  }
  return "";
}

std::string parse_working_directory(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return std::string(text);
}

} // namespace ciq::tuner
