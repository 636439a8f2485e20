#include "utils/json.h"

#include <cstdlib>

namespace ciq {

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue null_value;
  if (kind != Kind::object) return null_value;
  auto it = object.find(std::string(key));
  return it == object.end() ? null_value : it->second;
}

namespace {

class Parser {
public:
  explicit Parser(std::string_view text) : t_(text) {}

  Result<JsonValue> document() {
    auto v = value(0);
    if (!v) return v;
    skip();
    if (i_ != t_.size()) return fail("unexpected text after the value");
    return v;
  }

private:
  Error fail(const std::string& why) const { return make_error("parse", "JSON at offset " + std::to_string(i_) + ": " + why); }
  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  Result<JsonValue> value(int depth) {
    if (depth > 64) return fail("nested too deeply");
    skip();
    if (i_ >= t_.size()) return fail("unexpected end");
    JsonValue v;
    char c = t_[i_];
    if (c == '{') {
      v.kind = JsonValue::Kind::object;
      ++i_;
      skip();
      if (i_ < t_.size() && t_[i_] == '}') { ++i_; return v; }
      while (true) {
        skip();
        auto key = string();
        if (!key) return key.error();
        skip();
        if (i_ >= t_.size() || t_[i_] != ':') return fail("expected ':'");
        ++i_;
        auto member = value(depth + 1);
        if (!member) return member;
        v.object[*key] = std::move(*member);
        skip();
        if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
        if (i_ < t_.size() && t_[i_] == '}') { ++i_; return v; }
        return fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind = JsonValue::Kind::array;
      ++i_;
      skip();
      if (i_ < t_.size() && t_[i_] == ']') { ++i_; return v; }
      while (true) {
        auto item = value(depth + 1);
        if (!item) return item;
        v.array.push_back(std::move(*item));
        skip();
        if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
        if (i_ < t_.size() && t_[i_] == ']') { ++i_; return v; }
        return fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      auto s = string();
      if (!s) return s.error();
      v.kind = JsonValue::Kind::string;
      v.string = std::move(*s);
      return v;
    }
    if (literal("true")) { v.kind = JsonValue::Kind::boolean; v.boolean = true; return v; }
    if (literal("false")) { v.kind = JsonValue::Kind::boolean; return v; }
    if (literal("null")) return v;
    std::size_t start = i_;
    while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '-' || t_[i_] == '+' ||
                              t_[i_] == '.' || t_[i_] == 'e' || t_[i_] == 'E'))
      ++i_;
    if (start == i_) return fail("unexpected character");
    std::string number(t_.substr(start, i_ - start));
    char* end = nullptr;
    v.number = std::strtod(number.c_str(), &end);
    if (!end || *end) return fail("bad number '" + number + "'");
    v.kind = JsonValue::Kind::number;
    return v;
  }

  Result<std::string> string() {
    if (i_ >= t_.size() || t_[i_] != '"') return fail("expected a string");
    ++i_;
    std::string out;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (c != '\\') { out += c; continue; }
      if (i_ >= t_.size()) break;
      char e = t_[i_++];
      switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        if (i_ + 4 > t_.size()) return fail("bad \\u escape");
        unsigned code = std::strtoul(std::string(t_.substr(i_, 4)).c_str(), nullptr, 16);
        i_ += 4;
        if (code < 0x80) out += char(code);
        else if (code < 0x800) { out += char(0xC0 | (code >> 6)); out += char(0x80 | (code & 0x3F)); }
        else { out += char(0xE0 | (code >> 12)); out += char(0x80 | ((code >> 6) & 0x3F)); out += char(0x80 | (code & 0x3F)); }
        break;
      }
      default: out += e;
      }
    }
    if (i_ >= t_.size()) return fail("unterminated string");
    ++i_;
    return out;
  }

  std::string_view t_;
  std::size_t i_ = 0;
};

} // namespace

Result<JsonValue> parse_json(std::string_view text) { return Parser(text).document(); }

} // namespace ciq
