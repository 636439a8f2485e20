// JSON through nlohmann/json (header-only), converted into the small value
// type the rest of ciq reads.
#include "utils/json.h"
#include "utils/json_number.h"
#include "utils/text.h"

#include <nlohmann/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <cmath>

namespace ciq {

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue null_value;
  if (kind != Kind::object) return null_value;
  auto it = object.find(std::string(key));
  return it == object.end() ? null_value : it->second;
}

namespace {

JsonValue convert(const nlohmann::json& j) {
  JsonValue v;
  switch (j.type()) {
  case nlohmann::json::value_t::boolean:
    v.kind = JsonValue::Kind::boolean;
    v.boolean = j.get<bool>();
    break;
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
  case nlohmann::json::value_t::number_float:
    v.kind = JsonValue::Kind::number;
    v.number = j.get<double>();
    break;
  case nlohmann::json::value_t::string:
    v.kind = JsonValue::Kind::string;
    v.string = j.get<std::string>();
    break;
  case nlohmann::json::value_t::array:
    v.kind = JsonValue::Kind::array;
    v.array.reserve(j.size());
    for (const auto& e : j) v.array.push_back(convert(e));
    break;
  case nlohmann::json::value_t::object:
    v.kind = JsonValue::Kind::object;
    for (const auto& [key, e] : j.items()) v.object.emplace(key, convert(e));
    break;
  default: // null, discarded, binary: nothing ciq reads
    break;
  }
  return v;
}

} // namespace

Result<JsonValue> parse_json(std::string_view text) {
  // Nesting is bounded so that hostile input cannot exhaust the stack in
  // convert(): deeper than ciq's own files ever are.
  constexpr int k_max_depth = 64;
  bool too_deep = false;
  auto limit = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= k_max_depth)
      too_deep = true;
    return !too_deep;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end(), limit);
  } catch (const nlohmann::json::exception& e) {
    return make_error("parse", std::string("JSON: ") + e.what());
  }
  if (too_deep) return make_error("parse", "JSON nested deeper than " + std::to_string(k_max_depth) + " levels");
  if (j.is_discarded()) return make_error("parse", "not JSON");
  return convert(j);
}

std::string json_line(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json json_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return rounded_number(v);
}

} // namespace ciq
