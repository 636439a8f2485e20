// ciq-replay's options and the serve protocol's requests (options.h).
#include "tuner/replay/options.h"

#include "utils/text.h"

#include <cmath>
#include <cstdlib>

namespace ciq::replay {

namespace {

Error usage(const std::string& message) { return make_error(ciq::errc::usage, message); }

/// A word of the form --name or --name=value, for options that take a value.
struct ValueOption {
  bool matched = false;
  std::optional<std::string> value;  // when given as --name=value
};

ValueOption match_option(const std::string& word, std::string_view name) {
  if (word == name) return {true, std::nullopt};
  if (word.size() > name.size() && word.compare(0, name.size(), name) == 0 && word[name.size()] == '=')
    return {true, word.substr(name.size() + 1)};
  return {};
}

Result<int> positive_count(const std::string& name, const std::string& text, int minimum) {
  auto n = parse_integer(text);
  if (!n || *n < minimum || *n > 1000000)
    return usage(name + " " + text + ": expected a whole number from " + std::to_string(minimum) + " to 1000000");
  return int(*n);
}

/// Walks `words`, handing each option its value (the next word, or the
/// part after '='); `take` returns false for a word that is not an option it
/// knows, which is then a positional word.
template <typename Take>
Result<std::vector<std::string>> walk(const std::vector<std::string>& words, const std::vector<std::string_view>& valued,
                                      Take take) {
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    bool done = false;
    for (auto name : valued) {
      ValueOption m = match_option(w, name);
      if (!m.matched) continue;
      std::string value;
      if (m.value) value = *m.value;
      else if (i + 1 < words.size()) value = words[++i];
      else return usage(std::string(name) + " needs a value");
      if (auto r = take(std::string(name), value); !r) return r.error();
      done = true;
      break;
    }
    if (done) continue;
    positional.push_back(w);
  }
  return positional;
}

} // namespace

Result<Options> parse_command_line(const std::vector<std::string>& args) {
  Options o;
  if (args.empty()) return usage("no mode given: plan, run or serve (ciq-replay --help)");
  for (const auto& a : args)
    if (a == "--help" || a == "-h" || a == "help") return o;
  const std::string& mode = args[0];
  if (mode == "run") o.mode = Mode::run;
  else if (mode == "serve") o.mode = Mode::serve;
  else if (mode == "plan") o.mode = Mode::plan;
  else return usage("unknown mode '" + mode + "': expected run, serve or plan (ciq-replay --help)");
  std::vector<std::string> rest(args.begin() + 1, args.end());
  auto take = [&](const std::string& name, const std::string& value) -> Result<void> {
    if (name == "--cubin") o.cubin = value;
    else if (name == "--reference") o.reference = value;
    else if (name == "--samples") {
      auto n = positive_count(name, value, 1);
      if (!n) return n.error();
      o.samples = *n;
    } else if (name == "--warmup") {
      auto n = positive_count(name, value, 0);
      if (!n) return n.error();
      o.warmup = *n;
    } else if (name == "--device") {
      auto n = positive_count(name, value, 0);
      if (!n) return n.error();
      o.device = *n;
    } else if (name == "--max-time") {
      char* end = nullptr;
      double s = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !std::isfinite(s) || s <= 0)
        return usage("--max-time " + value + ": expected a number of seconds > 0");
      o.max_seconds = s;
    } else if (name == "--compare") {
      auto m = parse_compare_mode(value);
      if (!m) return m.error();
      o.compare = *m;
    }
    return {};
  };
  auto positional = walk(rest, {"--cubin", "--reference", "--samples", "--warmup", "--device", "--max-time", "--compare"}, take);
  if (!positional) return positional.error();
  for (const auto& w : *positional) {
    if (!w.empty() && w[0] == '-') return usage("unknown option '" + w + "' (ciq-replay --help)");
    o.captures.push_back(w);
  }
  if (o.captures.empty()) return usage(mode + " needs at least one capture directory (CIQ_CAPTURE's, or one <pid>-<n> in it)");
  if (o.mode == Mode::run && o.cubin.empty()) return usage("run needs --cubin FILE: the code to replay the capture with");
  if (o.mode != Mode::run && !o.cubin.empty())
    return usage(mode + " takes no --cubin" + (o.mode == Mode::serve ? ": each request names its own" : ""));
  return o;
}

Result<Request> parse_request(const std::vector<std::string>& words) {
  Request r;
  auto take = [&](const std::string& name, const std::string& value) -> Result<void> {
    if (name == "--cubin") r.cubin = value;
    else if (name == "--samples") {
      auto n = positive_count(name, value, 1);
      if (!n) return n.error();
      r.samples = *n;
    }
    return {};
  };
  auto positional = walk(words, {"--cubin", "--samples"}, take);
  if (!positional) return positional.error();
  for (const auto& w : *positional) {
    if (w == "--check") r.check = true;
    else return usage("cannot read request word '" + printable(w) + "' (a request is --cubin FILE [--samples N] [--check])");
  }
  if (r.cubin.empty()) return usage("the request names no --cubin FILE (a request is --cubin FILE [--samples N] [--check])");
  return r;
}

std::optional<WireRequest> read_wire_request(std::FILE* in) {
  std::vector<std::string> words;
  std::string line;
  // A request is a few short words; a longer line (garbage on stdin) is
  // cut, so memory stays bounded whatever arrives.
  constexpr std::size_t max_line = 64 * 1024;
  for (int c; (c = std::fgetc(in)) != EOF;) {
    if (c != '\n') {
      if (line.size() < max_line) line += char(c);
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) words.push_back(line);
    else if (!words.empty()) break;
    line.clear();
  }
  if (!line.empty()) words.push_back(line);  // the last line of input without its newline
  if (words.empty()) return std::nullopt;
  WireRequest r;
  const std::string prefix = "ciq-request: ";
  if (words[0].compare(0, prefix.size(), prefix) == 0) {
    r.id = std::string(trim(std::string_view(words[0]).substr(prefix.size())));
    words.erase(words.begin());
  }
  r.words = std::move(words);
  return r;
}

std::string format_answer(const std::vector<std::string>& lines, int status, const std::optional<std::string>& id) {
  std::string out;
  for (const auto& l : lines) out += printable(l) + "\n";  // one line each, whatever a capture's names hold
  out += "ciq-status: " + (id ? printable(*id) + " " : std::string()) + std::to_string(status) + "\n";
  return out;
}

} // namespace ciq::replay
