// Reading JSON (trace records, journals, summaries, manifests) into a small
// value type: objects, arrays, strings, numbers, true/false/null. The parser
// is nlohmann/json's; nesting is limited to 64 levels.
#pragma once

#include "utils/result.h"

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ciq {

/// `j` as one line of JSON as ciq writes it everywhere: no spaces, members
/// in the order they were added (ordered_json), bytes that are not UTF-8
/// as U+FFFD (what is written can be read back).
std::string json_line(const nlohmann::ordered_json& j);

/// A number as ciq's files write it: rounded_number() (utils/json_number.h:
/// 6 significant digits, a whole one without a fraction, "1144" not
/// "1144.0"), NaN and infinities as null.
nlohmann::ordered_json json_number(double v);

class JsonValue {
public:
  enum class Kind { null, boolean, number, string, array, object };

  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  /// Member `key` of an object, or a null value when absent.
  const JsonValue& operator[](std::string_view key) const;
  double number_or(double fallback) const { return kind == Kind::number ? number : fallback; }
  std::string string_or(std::string fallback) const { return kind == Kind::string ? string : fallback; }
  bool is_null() const { return kind == Kind::null; }
};

/// Parses one JSON document; trailing garbage is an error.
Result<JsonValue> parse_json(std::string_view text);

} // namespace ciq
