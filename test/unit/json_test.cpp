#include "utils/json.h"
#include "utils/text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ciq;

TEST(Json, ReadsEveryKind) {
  auto v = parse_json(R"({"n": 3, "f": -1.5e2, "s": "a\"b\u00e9\n", "t": true, "z": null, "a": [1, [2], {"k": "v"}]})");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ((*v)["n"].number_or(0), 3);
  EXPECT_EQ((*v)["f"].number_or(0), -150);
  EXPECT_EQ((*v)["s"].string_or(""), "a\"b\xc3\xa9\n");
  EXPECT_TRUE((*v)["t"].boolean);
  EXPECT_TRUE((*v)["z"].is_null());
  EXPECT_TRUE((*v)["missing"].is_null());
  ASSERT_EQ((*v)["a"].array.size(), 3u);
  EXPECT_EQ((*v)["a"].array[1].array[0].number_or(0), 2);
  EXPECT_EQ((*v)["a"].array[2]["k"].string_or(""), "v");
  EXPECT_EQ((*v)["n"].string_or("fallback"), "fallback"); // wrong kind: the fallback
}

TEST(Json, RefusesWhatIsNotOneDocument) {
  for (const char* bad : {"", "{", "{\"a\":1} x", "[1,]", "{'a':1}", "nul", "\"\\x\"", "[1 2]", "\"\xff\""})
    EXPECT_FALSE(parse_json(bad)) << bad;
  auto err = parse_json("{\"a\": [1, }");
  ASSERT_FALSE(err);
  EXPECT_NE(err.error().message.find("JSON"), std::string::npos) << err.error().message;
}

TEST(Json, NestingIsBounded) {
  std::string ok = std::string(60, '[') + std::string(60, ']');
  EXPECT_TRUE(parse_json(ok));
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto r = parse_json(deep);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("deeper than 64"), std::string::npos) << r.error().message;
}

TEST(Json, WhatIsWrittenReadsBack) {
  for (std::string s : {std::string("plain"), std::string("q\"b\\s\n\t\r\x01\x1f"), std::string("caf\xc3\xa9"),
                        std::string("/path/\xff\xfe/x")}) {
    // As ciq's writers write a string (json_line: nlohmann, U+FFFD for bytes
    // that are not UTF-8).
    std::string quoted = json_line(nlohmann::ordered_json(s));
    auto v = parse_json("{\"k\":" + quoted + "}");
    ASSERT_TRUE(v) << quoted;
    if (s.find('\xff') == std::string::npos) EXPECT_EQ((*v)["k"].string_or("?"), s);
    else EXPECT_EQ((*v)["k"].string_or("?"), "/path/\xef\xbf\xbd\xef\xbf\xbd/x"); // U+FFFD each
  }
}

TEST(Json, escapes_controls_and_quotes) {
  EXPECT_EQ(json_line(nlohmann::ordered_json("a\"b\\c\n\x01")), "\"a\\\"b\\\\c\\n\\u0001\"");
}
