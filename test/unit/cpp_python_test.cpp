// The C++ half of the table that holds ciq's C++ side and its Python
// package to the same readings (test/vectors/cpp_python.json; the Python
// half is test/python/test_cpp_python.py): control sets (refused, or their
// digest), control sets checked and rendered against spaces/ptxas-13.space
// as ciq-ptxas does (refused, or the options it appends), and the bench
// server protocol: status lines (garbled, or the status) and requests
// (refused, or their text).
#include "spaces/control_set.h"
#include "spaces/render.h"
#include "spaces/space.h"
#include "tuner/measure/bench_protocol.h"
#include "utils/files.h"
#include "utils/json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ciq;

namespace {

const std::string k_source = CIQ_SOURCE_DIR;

const JsonValue& vectors() {
  static const JsonValue table = [] {
    auto text = read_file(k_source + "/test/vectors/cpp_python.json");
    if (!text) ADD_FAILURE() << text.error().message;
    auto json = text ? parse_json(*text) : Result<JsonValue>(make_error("io", "unread"));
    if (!json) ADD_FAILURE() << json.error().message;
    return json ? *json : JsonValue();
  }();
  return table;
}

/// An entry's input: `text`, or `hex` for bytes that are not UTF-8.
std::string input_of(const JsonValue& entry) {
  if (entry["hex"].is_null()) return entry["text"].string;
  const std::string& hex = entry["hex"].string;
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes += char(std::stoi(hex.substr(i, 2), nullptr, 16));
  return bytes;
}

} // namespace

TEST(CppPython, control_sets_are_refused_or_digested_alike) {
  const auto& entries = vectors()["control_sets"].array;
  ASSERT_GE(entries.size(), 30u);
  for (const auto& e : entries) {
    auto set = spaces::parse_control_set(input_of(e), "vector");
    if (e["refused"].boolean) {
      EXPECT_FALSE(set.ok()) << e["name"].string << ": accepted, digest " << spaces::control_set_digest(*set);
    } else if (!set.ok()) {
      ADD_FAILURE() << e["name"].string << ": refused: " << set.error().message;
    } else {
      EXPECT_EQ(spaces::control_set_digest(*set), e["digest"].string) << e["name"].string;
    }
  }
}

// What ciq-ptxas does with a controls file for ptxas 13 (wrapper/
// ptxas_wrapper.cpp): the ptxas stage, the running space's name where the
// set names none, validate_controls (numerics allowed, unsafe as
// CIQ_ALLOW_UNSAFE says), then render_controls' options.
TEST(CppPython, sets_are_refused_or_rendered_as_ciq_ptxas_renders_them) {
  auto space = spaces::load_space(k_source + "/spaces", "ptxas-13");
  ASSERT_TRUE(space.ok()) << space.error().message;
  const auto& entries = vectors()["render"].array;
  ASSERT_GE(entries.size(), 20u);
  for (const auto& e : entries) {
    auto parsed = spaces::parse_control_set(input_of(e), "vector");
    ASSERT_TRUE(parsed.ok()) << e["name"].string << ": " << parsed.error().message;
    spaces::ControlSet set = parsed->ptxas_stage();
    if (set.space.empty()) set.space = space->name;
    spaces::Policy policy;
    policy.allow_unsafe = e["allow_unsafe"].boolean;
    auto valid = spaces::validate_controls(*space, set, policy);
    if (e["refused"].boolean) {
      EXPECT_FALSE(valid.ok()) << e["name"].string << ": applied";
      continue;
    }
    ASSERT_TRUE(valid.ok()) << e["name"].string << ": refused: " << valid.error().message;
    std::vector<std::string> expected;
    for (const auto& option : e["options"].array) expected.push_back(option.string);
    EXPECT_EQ(spaces::render_controls(*space, set).options, expected) << e["name"].string;
  }
}

TEST(CppPython, status_lines_are_garbled_or_read_alike) {
  const auto& entries = vectors()["status_lines"].array;
  ASSERT_GE(entries.size(), 20u);
  for (const auto& e : entries) {
    const std::string& rest = e["rest"].string;
    auto status = tuner::read_answer_status(rest, std::stoull(e["id"].string));
    if (e["garbled"].boolean) {
      EXPECT_FALSE(status.ok()) << "'" << rest << "': read as " << *status;
    } else if (!status.ok()) {
      ADD_FAILURE() << "'" << rest << "': " << status.error().message;
    } else {
      EXPECT_EQ(*status, int(e["status"].number)) << "'" << rest << "'";
    }
  }
}

TEST(CppPython, requests_are_refused_or_encoded_alike) {
  const auto& entries = vectors()["requests"].array;
  ASSERT_GE(entries.size(), 5u);
  for (const auto& e : entries) {
    std::vector<std::string> words;
    for (const auto& w : e["words"].array) words.push_back(w.string);
    auto encoded = tuner::encode_request(std::stoull(e["id"].string), words);
    if (e["refused"].boolean) {
      EXPECT_FALSE(encoded.ok()) << "request " << e["id"].string << ": encoded as " << *encoded;
    } else if (!encoded.ok()) {
      ADD_FAILURE() << "request " << e["id"].string << ": " << encoded.error().message;
    } else {
      EXPECT_EQ(*encoded, e["encoded"].string) << "request " << e["id"].string;
    }
  }
}
