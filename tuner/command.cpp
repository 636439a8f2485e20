#include "tuner/command.h"

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

} // namespace ciq::tuner
