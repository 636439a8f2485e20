#include "tuner/measure/command.h"

#include "utils/files.h"
#include "utils/text.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

namespace ciq::tuner {

Result<std::vector<std::string>> split_words(const std::string& command) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == '\'') {
      auto end = command.find('\'', i + 1);
      if (end == std::string::npos) return make_error("invalid", "unterminated ' in: " + command);
      current += command.substr(i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (c == '"') {
      in_word = true;
      for (++i; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '\\' && i + 1 < command.size() &&
            (command[i + 1] == '"' || command[i + 1] == '\\' || command[i + 1] == '$' || command[i + 1] == '`'))
          ++i;
        current += command[i];
      }
      if (i >= command.size()) return make_error("invalid", "unterminated \" in: " + command);
    } else if (c == '\\' && i + 1 < command.size()) {
      current += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(current)), current.clear();
      in_word = false;
    } else {
      current += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(current));
  if (words.empty()) return make_error("invalid", "empty command");
  return words;
}

Result<std::string> fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    auto close = text.find('}', i);
    std::string name = close == std::string::npos ? "" : text.substr(i + 1, close - i - 1);
    bool known_form = name == "controls" || name == "workdir" || name == "gpu" || name.rfind("param:", 0) == 0;
    if (!known_form) { // not a placeholder (e.g. a shell brace or JSON): keep it
      out += text[i];
      continue;
    }
    auto it = values.find(name);
    if (it == values.end()) return make_error("invalid", "unknown placeholder {" + name + "} in: " + text);
    out += it->second;
    i = close;
  }
  return out;
}

Result<std::vector<std::string>> command_argv(const std::string& command, const std::map<std::string, std::string>& values,
                                              bool shell) {
  if (shell) {
    auto filled = fill_placeholders(command, values);
    if (!filled) return filled.error();
    return std::vector<std::string>{"/bin/sh", "-c", *filled};
  }
  auto words = split_words(command);
  if (!words) return words;
  for (auto& w : *words) {
    auto filled = fill_placeholders(w, values);
    if (!filled) return filled.error();
    w = std::move(*filled);
  }
  return words;
}

std::string command_log_text(const RunResult& run) {
  std::string log = run.out + run.err + "\n";
  auto dropped = [&](const char* stream, std::size_t bytes) {
    if (bytes)
      log += "[the middle of its " + std::string(stream) + " was dropped: " + std::to_string(bytes) + " bytes; the first and last " +
             std::to_string(k_kept_output_bytes >> 20) + " MiB are kept]\n";
  };
  dropped("stdout", run.out_dropped);
  dropped("stderr", run.err_dropped);
  if (run.streams_left_open)
    log += "[it exited, but a process it started still held its output open: stopped reading after " +
           format_number(k_output_grace_seconds) + " s]\n";
  return log + "[" + run.describe() + "]\n";
}

void append_log(const std::string& path, const std::string& text) {
  if (auto r = append_file(path, text); !r) spdlog::warn("{}", r.error().message);
}

namespace {

bool mentions_error(std::string_view line) {
  static const std::string_view word = "error";
  auto it = std::search(line.begin(), line.end(), word.begin(), word.end(),
                        [](char a, char b) { return std::tolower((unsigned char)a) == b; });
  return it != line.end();
}

std::string shown_line(std::string_view line) {
  constexpr std::size_t k_width = 300;
  return line.size() <= k_width ? std::string(line) : std::string(line.substr(0, k_width)) + "...";
}

} // namespace

std::string failure_message(const std::string& summary, const std::string& output, const std::string& log_path) {
  std::vector<std::string_view> lines;
  for (auto line : split(output, '\n'))
    if (!trim(line).empty()) lines.push_back(line.substr(0, line.find_last_not_of(" \t\r") + 1));
  std::string message = summary;
  std::string_view key;
  if (!lines.empty()) {
    auto first_error = std::find_if(lines.begin(), lines.end(), mentions_error);
    key = first_error != lines.end() ? *first_error : lines.back();
    message += ": " + shown_line(trim(key));
  }
  if (!log_path.empty()) message += " (log: " + log_path + ")";
  if (lines.size() <= 1) return message;
  // The first and last lines, and the error lines between them.
  constexpr std::size_t k_ends = 4, k_middle_errors = 4;
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    bool end = i < k_ends || i + k_ends >= lines.size();
    std::size_t middle = picked.size() >= k_ends ? picked.size() - k_ends : 0;
    if (end || (mentions_error(lines[i]) && middle < k_middle_errors)) picked.push_back(i);
  }
  for (std::size_t k = 0; k < picked.size(); ++k) {
    if (k > 0 && picked[k] != picked[k - 1] + 1) message += "\n  | ...";
    message += "\n  | " + shown_line(lines[picked[k]]);
  }
  return message;
}

} // namespace ciq::tuner
