#include "utils/text.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace ciq {

std::string_view trim(std::string_view s) {
  const char* space = " \t\r\n\f\v";
  auto b = s.find_first_not_of(space);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(space);
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    auto pos = s.find(separator);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  return parts;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

static bool class_match(std::string_view pattern, std::size_t& p, char c) {
  // pattern[p] == '['; on return p is past the closing ']'.
  std::size_t i = p + 1;
  bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negate) ++i;
  bool matched = false, first = true;
  for (; i < pattern.size() && (first || pattern[i] != ']'); ++i, first = false) {
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      if (pattern[i] <= c && c <= pattern[i + 2]) matched = true;
      i += 2;
    } else if (pattern[i] == c) {
      matched = true;
    }
  }
  p = i + 1;
  return matched != negate;
}

// Where the class that opens at pattern[p] ('[') ends (its ']'), or npos
// when none closes it (then '[' is literal, as class_match() sees it). The
// class's first member, after a '!' or '^' that negates it, may be ']'.
static std::size_t class_end(std::string_view pattern, std::size_t p) {
  std::size_t first = p + 1;
  if (first < pattern.size() && (pattern[first] == '!' || pattern[first] == '^')) ++first;
  return first + 1 <= pattern.size() ? pattern.find(']', first + 1) : std::string_view::npos;
}

// The first `{...}` group of `pattern` with a comma at its level, outside a
// [class], as the positions of its braces and its top-level commas; empty
// when there is none.
static std::vector<std::size_t> brace_group(std::string_view pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '[') {
      if (std::size_t e = class_end(pattern, i); e != std::string_view::npos) i = e;
      continue;
    }
    if (pattern[i] != '{') continue;
    std::vector<std::size_t> marks{i};
    for (std::size_t j = i + 1; j < pattern.size(); ++j) {
      if (pattern[j] == '[') {
        if (std::size_t e = class_end(pattern, j); e != std::string_view::npos) j = e;
      } else if (pattern[j] == '{') {
        break; // not nested: this '{' is literal
      } else if (pattern[j] == ',') {
        marks.push_back(j);
      } else if (pattern[j] == '}') {
        if (marks.size() < 2) break; // no comma: literal braces
        marks.push_back(j);
        return marks;
      }
    }
  }
  return {};
}

static bool plain_glob_match(std::string_view pattern, std::string_view text);

bool glob_match(std::string_view pattern, std::string_view text) {
  std::vector<std::size_t> group = brace_group(pattern);
  if (group.empty()) return plain_glob_match(pattern, text);
  std::string_view head = pattern.substr(0, group.front()), tail = pattern.substr(group.back() + 1);
  for (std::size_t a = 0; a + 1 < group.size(); ++a) {
    std::string alternative(head);
    alternative += pattern.substr(group[a] + 1, group[a + 1] - group[a] - 1);
    alternative += tail;
    if (glob_match(alternative, text)) return true;
  }
  return false;
}

std::string glob_problem(std::string_view pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '[') {
      std::size_t e = class_end(pattern, i);
      std::string at = std::to_string(i + 1);
      if (e == std::string_view::npos)
        return "the '[' at character " + at + " opens a character class that no ']' closes (a literal '[' is written [[])";
      // What class_match() would take silently: a POSIX class name, which
      // it reads as its letters, and a reversed range, which matches nothing.
      std::size_t first = i + 1 + (pattern[i + 1] == '!' || pattern[i + 1] == '^');
      if (e - first >= 4 && pattern[first] == '[' && pattern[first + 1] == ':' && pattern[e - 1] == ':')
        return "the class at character " + at + " names a POSIX class (" + std::string(pattern.substr(first, e - first)) +
               "]), which globs here do not know: list its characters instead, as in [a-zA-Z]";
      for (std::size_t j = first; j < e; ++j)
        if (j + 2 < e && pattern[j + 1] == '-') {
          if (pattern[j] > pattern[j + 2])
            return "the range " + std::string(pattern.substr(j, 3)) + " in the class at character " + at +
                   " is reversed and matches nothing (write " + pattern[j + 2] + "-" + pattern[j] + ")";
          j += 2;
        }
      i = e;
      continue;
    }
    if (pattern[i] != '{') continue;
    bool comma = false;
    std::size_t j = i + 1;
    for (; j < pattern.size() && pattern[j] != '}' && pattern[j] != '{'; ++j) {
      if (pattern[j] == '[' && class_end(pattern, j) != std::string_view::npos) j = class_end(pattern, j);
      else comma |= pattern[j] == ',';
    }
    if (comma && (j == pattern.size() || pattern[j] == '{'))
      return "the '{' at character " + std::to_string(i + 1) + " opens a group of alternatives that no '}' closes (a literal '{' is written [{])";
  }
  return "";
}

std::string glob_option_problem(std::string_view option, std::string_view glob, bool given) {
  std::string name(option);
  if (given && glob.empty()) return name + " '' selects no kernel: leave it out (or give '*') to select every kernel";
  if (std::string problem = glob_problem(glob); !problem.empty())
    return name + " '" + std::string(glob) + "' is not a well-formed glob: " + problem;
  return "";
}

std::string exact_glob(std::string_view name) {
  std::string g;
  for (char c : name) {
    if (std::string_view("*?[]\\{},").find(c) != std::string_view::npos) g += std::string("[") + c + "]";
    else g += c;
  }
  return g;
}

static bool plain_glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = p++;
      star_t = t;
      continue;
    }
    if (p < pattern.size()) {
      std::size_t next = p;
      bool ok;
      if (pattern[p] == '[' && class_end(pattern, p) != std::string_view::npos) {
        ok = class_match(pattern, next, text[t]);
      } else {
        ok = pattern[p] == '?' || pattern[p] == text[t];
        next = p + 1;
      }
      if (ok) {
        p = next;
        ++t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p + 1;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<long long> parse_integer(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<long long> parse_canonical_integer(std::string_view s) {
  std::string_view digits = !s.empty() && s.front() == '-' ? s.substr(1) : s;
  if (digits.empty() || digits.size() > 18 || (digits.front() == '0' && (digits.size() > 1 || digits != s)))
    return std::nullopt;
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return parse_integer(s);
}

Result<std::vector<KeyValue>> parse_key_values(std::string_view text, std::string_view origin) {
  std::vector<KeyValue> out;
  std::string section;
  int line_no = 0;
  auto fail = [&](const std::string& why) {
    return make_error("parse", std::string(origin) + ":" + std::to_string(line_no) + ": " + why);
  };
  for (std::string_view raw : split(text, '\n')) {
    ++line_no;
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3) return fail("malformed section header '" + std::string(line) + "'");
      section = std::string(trim(line.substr(1, line.size() - 2)));
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos) return fail("expected 'key = value', got '" + std::string(line) + "'");
    std::string_view key = trim(line.substr(0, eq));
    std::string_view value = trim(line.substr(eq + 1));
    if (key.empty()) return fail("missing key before '='");
    if (key.find_first_of(" \t\"") != std::string_view::npos) return fail("malformed key '" + std::string(key) + "'");
    std::string unquoted;
    if (!value.empty() && value.front() == '"') {
      std::size_t i = 1;
      bool closed = false;
      for (; i < value.size(); ++i) {
        char c = value[i];
        if (c == '\\' && i + 1 < value.size()) {
          char n = value[++i];
          unquoted += n == 'n' ? '\n' : n == 't' ? '\t' : n;
        } else if (c == '"') {
          closed = true;
          ++i;
          break;
        } else {
          unquoted += c;
        }
      }
      std::string_view after = trim(value.substr(i));
      if (!closed) return fail("unterminated quoted value");
      if (!after.empty() && after.front() != '#') return fail("unexpected text after quoted value");
    } else {
      auto hash = value.find(" #");
      unquoted = std::string(trim(value.substr(0, hash)));
    }
    out.push_back(KeyValue{section, std::string(key), std::move(unquoted), line_no});
  }
  return out;
}

std::string format_key_value(std::string_view key, std::string_view value) {
  bool quote = value.empty() || value != trim(value) || value.find_first_of("\"#\n\t\\") != std::string_view::npos ||
               value.front() == '[';
  std::string out(key);
  out += " = ";
  if (!quote) return out.append(value);
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    if (c == '\t') { out += "\\t"; continue; }
    out += c;
  }
  return out + '"';
}

std::string release_of(std::string_view version) {
  std::size_t first = version.find('.');
  std::size_t second = first == std::string_view::npos ? first : version.find('.', first + 1);
  return std::string(version.substr(0, second));
}

std::string format_number(double value) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

/// Length of the valid UTF-8 sequence at the start of `s` (2 to 4) and its
/// code point; 0 when it is not one (a stray continuation byte, a truncated
/// sequence, an overlong form, a surrogate, past U+10FFFF).
std::size_t utf8_sequence(std::string_view s, char32_t& code_point) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = byte(0);
  std::size_t length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 && lead <= 0xdf ? 2 : 0;
  if (length == 0 || s.size() < length) return 0;
  char32_t c = lead & (0x7f >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    c = (c << 6) | (byte(i) & 0x3f);
  }
  if ((length == 3 && c < 0x800) || (length == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
    return 0;
  code_point = c;
  return length;
}

std::string escaped(std::string_view s, bool keep_newlines) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  auto hex_byte = [&](unsigned char b) { out += {'\\', 'x', digits[b >> 4], digits[b & 15]}; };
  for (std::size_t i = 0; i < s.size();) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      if (b >= 0x20 && b != 0x7f) out += char(b);
      else if (b == '\n') out += keep_newlines ? "\n" : "\\n";
      else if (b == '\r') out += "\\r";
      else if (b == '\t') out += "\\t";
      else hex_byte(b);
      continue;
    }
    char32_t c = 0;
    std::size_t length = utf8_sequence(s.substr(i), c);
    if (length == 0) {
      hex_byte(b);
      ++i;
      continue;
    }
    if (c <= 0x9f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += digits[(c >> shift) & 15];
    } else {
      out.append(s.substr(i, length));
    }
    i += length;
  }
  return out;
}

} // namespace

std::string printable(std::string_view s) { return escaped(s, false); }

std::string printable_lines(std::string_view s) { return escaped(s, true); }

bool is_printable(std::string_view s) { return printable(s) == s; }

} // namespace ciq
