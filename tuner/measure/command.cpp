#include "tuner/measure/command.h"

#include "utils/files.h"
#include "utils/text.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <utility>

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
    } else if (c == '\\' && i + 1 < command.size() && command[i + 1] == '\n') {
      ++i; // a line continuation, as in a shell: nothing
    } else if (c == '\\' && i + 1 < command.size()) {
      current += command[++i];
      in_word = true;
    } else if (c == '\n' && command.find_first_not_of(" \t\n", i) != std::string::npos) {
      // A shell runs each line as a command of its own; split into words,
      // the lines would run as one command with the next lines' words as
      // arguments (nvcc: "A single input file is required").
      return make_error("invalid", "a command of several lines runs no shell: without --shell it is one program with its "
                                   "arguments, and the lines would run as one command. Give --shell to run it as a script "
                                   "(/bin/sh -c), join the lines (a '\\' at a line's end continues it), or put them in a "
                                   "script file: " + printable(command));
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

namespace {

// The placeholder that starts at text[i] (a '{'): its name and the index of
// its '}'; std::nullopt for any other brace (a shell's, awk's, JSON's).
std::optional<std::pair<std::string, std::size_t>> placeholder_at(const std::string& text, std::size_t i) {
  if (text[i] != '{') return std::nullopt;
  auto close = text.find('}', i);
  if (close == std::string::npos) return std::nullopt;
  std::string name = text.substr(i + 1, close - i - 1);
  if (name == "controls" || name == "workdir" || name == "gpu" || name.rfind("param:", 0) == 0)
    return std::make_pair(std::move(name), close);
  return std::nullopt;
}

// `value` with every ' written as '\'' (close, an escaped quote, reopen):
// what may stand between two single quotes.
std::string inside_single_quotes(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out;
}

} // namespace

std::string shell_quoted(std::string_view value) { return "'" + inside_single_quotes(value) + "'"; }

Result<std::string> fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto placeholder = placeholder_at(text, i);
    if (!placeholder) {
      out += text[i];
      continue;
    }
    auto it = values.find(placeholder->first);
    if (it == values.end()) return make_error("invalid", "unknown placeholder {" + placeholder->first + "} in: " + text);
    out += it->second;
    i = placeholder->second;
  }
  return out;
}

namespace {

// A --shell command with placeholders must not hold a word the shell reads
// again or in a context this reading does not follow: refused outright
// rather than quoted for the wrong context (`case` patterns end in ')',
// which would close a $( ) here; eval and a nested `sh -c` parse the value
// again). As a command word: at the start or after a separator (a shell's
// path, /bin/sh -c, too), and followed by a blank.
Result<void> refuse_words_read_again(const std::string& text) {
  bool has_placeholder = false;
  for (std::size_t i = 0; i < text.size() && !has_placeholder; ++i) has_placeholder = placeholder_at(text, i).has_value();
  if (!has_placeholder) return {};
  auto command_word_at = [&](std::size_t at, std::size_t length, bool path_allowed) {
    static const std::string before = " \t\n;(|&`{", after = " \t\n";
    bool starts = at == 0 || before.find(text[at - 1]) != std::string::npos || (path_allowed && text[at - 1] == '/');
    return starts && at + length < text.size() && after.find(text[at + length]) != std::string::npos;
  };
  for (const char* word : {"case", "eval", "sh -c", "bash -c", "dash -c", "zsh -c", "ksh -c"}) {
    bool shell = std::strchr(word, ' ') != nullptr;
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1))
      if (command_word_at(at, std::strlen(word), shell))
        return make_error("invalid", "a --shell command with placeholders must not use '" + std::string(word) +
                                         "': a value there would be read as shell text again, or in a context ciq "
                                         "cannot quote for; put that part in a script and pass the value as an argument: " + text);
  }
  return {};
}

// Reads a --shell template as the shell would, tracking what it is inside
// at each point (quotes, $( ), ${ }, $(( )), backquotes, comments,
// here-documents), and writes it out with each placeholder's value quoted
// for that context.
class ShellTemplate {
public:
  ShellTemplate(const std::string& text, const std::map<std::string, std::string>& values) : text_(text), values_(values) {}

  Result<std::string> fill() {
    for (i_ = 0; i_ < text_.size(); ++i_) {
      if (auto placeholder = placeholder_at(text_, i_)) {
        if (auto filled = fill_one(placeholder->first); !filled) return filled.error();
        i_ = placeholder->second;
        continue;
      }
      char c = text_[i_];
      out_ += c;
      Quoting quoting = stack_.back().quoting;
      if (quoting == Quoting::single) {
        if (c == '\'') stack_.pop_back();
      } else if (quoting == Quoting::backquote) {
        if (c == '\\' && next_is()) out_ += text_[++i_];
        else if (c == '`') stack_.pop_back();
      } else if (quoting == Quoting::brace) {
        if (c == '}') stack_.pop_back();
      } else {
        step_code(c);
      }
    }
    Quoting last = stack_.back().quoting;
    if (last == Quoting::single || last == Quoting::double_ || last == Quoting::backquote)
      return make_error("invalid", "unterminated quote in --shell command: " + text_);
    return out_;
  }

private:
  enum class Quoting { none, single, double_, backquote, brace, arithmetic };
  // What the shell is reading; `parens` counts the open '(' of a $( ) (or
  // a subshell) inside that context, so that the ')' that ends the $( ) is
  // told from theirs.
  struct Context {
    Quoting quoting;
    int parens = 0;
  };

  bool next_is() const { return i_ + 1 < text_.size(); }

  Error refuse(const std::string& name, const char* where) const {
    return make_error("invalid", "{" + name + "} stands inside " + where + " in a --shell command, where its value cannot be "
                                 "quoted safely; use $(...) or a plain word instead: " + text_);
  }

  // The placeholder `name` at i_, its value quoted for where it stands.
  Result<void> fill_one(const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end()) return make_error("invalid", "unknown placeholder {" + name + "} in: " + text_);
    if (here_document_)
      return make_error("invalid", "{" + name + "} comes after a here-document (<<) in a --shell command; its "
                                   "body takes no quoting, so a value there could run as a command: pass it as an "
                                   "argument (or through a file) instead: " + text_);
    const std::string& value = it->second;
    switch (stack_.back().quoting) {
    case Quoting::none: out_ += shell_quoted(value); break;
    case Quoting::single: out_ += inside_single_quotes(value); break;          // '...{x}...'
    case Quoting::double_: out_ += "\"" + shell_quoted(value) + "\""; break;  // "...{x}...": close, quote, reopen
    case Quoting::backquote: return refuse(name, "`...`");
    case Quoting::brace: return refuse(name, "${...}");
    case Quoting::arithmetic: // no quotes there: a number or a variable's name only
      if (value.empty() || value.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.+-") !=
                               std::string::npos)
        return make_error("invalid", "{" + name + "} inside $((...)) in a --shell command must be a number, not '" + value + "'");
      out_ += value;
      break;
    }
    return {};
  }

  // c (at i_, already written) read as code: unquoted, inside "...", or
  // inside $(( )).
  void step_code(char c) {
    Context& top = stack_.back();
    bool quoted = top.quoting == Quoting::double_;
    if (c == '\\' && next_is()) {
      out_ += text_[++i_];
    } else if (c == '$' && text_.compare(i_ + 1, 2, "((") == 0) {
      out_ += "((";
      i_ += 2;
      stack_.push_back({Quoting::arithmetic});
    } else if (top.quoting == Quoting::arithmetic && c == ')' && top.parens == 0) {
      if (next_is() && text_[i_ + 1] == ')') out_ += text_[++i_]; // the end of $(( ))
      stack_.pop_back();
    } else if (c == '$' && next_is() && text_[i_ + 1] == '(') {
      out_ += text_[++i_];
      stack_.push_back({Quoting::none});
    } else if (c == '$' && next_is() && text_[i_ + 1] == '{' && !placeholder_at(text_, i_ + 1)) {
      out_ += text_[++i_];
      stack_.push_back({Quoting::brace});
    } else if (c == '`') {
      stack_.push_back({Quoting::backquote});
    } else if (!quoted && c == '<' && text_.compare(i_, 3, "<<<") == 0) {
      out_ += "<<";  // a here-string: its word is quoted like any other
      i_ += 2;
    } else if (!quoted && top.quoting != Quoting::arithmetic && c == '<' && text_.compare(i_, 2, "<<") == 0) {
      // `<<` or `<<-`: a here-document's body takes no quoting at all
      // (quotes are text there, $(...) runs): from here on no placeholder
      // is filled. Conservative: also one after the body's end.
      here_document_ = true;
    } else if (quoted) {
      if (c == '"') stack_.pop_back();
    } else {
      step_unquoted(c, top);
    }
  }

  // c (at i_, already written) outside any quotes.
  void step_unquoted(char c, Context& top) {
    if (c == '\'') {
      stack_.push_back({Quoting::single});
    } else if (c == '"') {
      stack_.push_back({Quoting::double_});
    } else if (c == '(') {
      ++top.parens;
    } else if (c == ')') {
      if (top.parens > 0) --top.parens;
      else if (stack_.size() > 1) stack_.pop_back(); // the end of a $( )
    } else if (c == '#' && (i_ == 0 || std::strchr(" \t\n;&|()", text_[i_ - 1]))) {
      // A comment: nothing in it is read (a quote in it opens nothing).
      auto nl = text_.find('\n', i_);
      std::size_t end = nl == std::string::npos ? text_.size() : nl;
      out_.append(text_, i_ + 1, end - i_ - 1);
      i_ = end - 1;
    }
  }

  const std::string& text_;
  const std::map<std::string, std::string>& values_;
  std::vector<Context> stack_{{Quoting::none}};
  std::string out_;
  std::size_t i_ = 0;
  bool here_document_ = false;
};

} // namespace

Result<std::string> fill_shell_placeholders(const std::string& text, const std::map<std::string, std::string>& values) {
  if (auto refused = refuse_words_read_again(text); !refused) return refused.error();
  return ShellTemplate(text, values).fill();
}

Result<std::vector<std::string>> command_argv(const std::string& command, const std::map<std::string, std::string>& values,
                                              bool shell) {
  if (shell) {
    auto filled = fill_shell_placeholders(command, values);
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
