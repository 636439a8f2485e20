#include "utils/text.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace ciq;

TEST(Glob, stars_classes_and_anchoring) {
  EXPECT_TRUE(glob_match("*heavy*", "_Z7heavy_aPKfPfi"));
  EXPECT_TRUE(glob_match("_Z?heavy_[ab]*", "_Z7heavy_bPKfPfi"));
  EXPECT_FALSE(glob_match("_Z?heavy_[!ab]*", "_Z7heavy_bPKfPfi"));
  EXPECT_FALSE(glob_match("heavy", "_Z7heavy_aPKfPfi"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "axxbyyc"));
  EXPECT_FALSE(glob_match("a*b*c", "axxbyy"));
  EXPECT_TRUE(glob_match("[a-c]x", "bx"));
}

TEST(Glob, exact_glob_matches_its_name_alone) {
  // A campaign hands each child run one kernel by name, whatever characters
  // a demangled or templated name holds.
  for (const char* name : {"_Z5lightPff", "k<{lambda()#1}>", "f<int[3],float>", "a*b?c", "x\\y", "{a,b}", "]["}) {
    EXPECT_TRUE(glob_match(exact_glob(name), name)) << name << " as " << exact_glob(name);
    EXPECT_EQ(glob_problem(exact_glob(name)), "") << name;
  }
  EXPECT_FALSE(glob_match(exact_glob("a*b?c"), "aXbYc"));
  EXPECT_FALSE(glob_match(exact_glob("{a,b}"), "a"));
  EXPECT_FALSE(glob_match(exact_glob("_Z5lightPff"), "_Z5lightPffx"));
  EXPECT_EQ(exact_glob("f<int[3]>"), "f<int[[]3[]]>");
}

TEST(Glob, braces_give_alternatives) {
  // One glob for a set of kernels (a campaign's --kernels for a run of several).
  EXPECT_TRUE(glob_match("{_Z7heavy_aPKfPfi,_Z5lightPff}", "_Z5lightPff"));
  EXPECT_TRUE(glob_match("{_Z7heavy_aPKfPfi,_Z5lightPff}", "_Z7heavy_aPKfPfi"));
  EXPECT_FALSE(glob_match("{_Z7heavy_aPKfPfi,_Z5lightPff}", "_Z7heavy_bPKfPfi"));
  EXPECT_TRUE(glob_match("_Z?{heavy,light}*", "_Z5lightPff"));
  EXPECT_TRUE(glob_match("a{,b}c", "ac"));
  // Without a comma at their level, and inside a class, braces are literal
  // (a demangled lambda's "{lambda()#1}").
  EXPECT_TRUE(glob_match("*{lambda()#1}*", "k<{lambda()#1}>"));
  EXPECT_FALSE(glob_match("*{lambda()#1}*", "k<lambda()#1>"));
  EXPECT_TRUE(glob_match("{f<int[,]float>,g}", "f<int,float>"));
  EXPECT_TRUE(glob_match("[{]a,b[}]", "{a,b}"));
}

TEST(KeyValues, sections_quotes_and_comments) {
  auto kv = parse_key_values("# c\nformat = x\n[controls]\nname = \"a \\\"b\\\" # c\"  # trailing\nk:v = 3 # note\n", "t");
  ASSERT_TRUE(kv.ok()) << kv.error().message;
  ASSERT_EQ(kv->size(), 3u);
  EXPECT_EQ((*kv)[0].section, "");
  EXPECT_EQ((*kv)[1].section, "controls");
  EXPECT_EQ((*kv)[1].value, "a \"b\" # c");
  EXPECT_EQ((*kv)[2].key, "k:v");
  EXPECT_EQ((*kv)[2].value, "3");
  EXPECT_EQ((*kv)[2].line, 5);
}

TEST(KeyValues, errors_name_the_line) {
  auto kv = parse_key_values("a = 1\nnot a pair\n", "file.txt");
  ASSERT_FALSE(kv.ok());
  EXPECT_EQ(kv.error().message, "file.txt:2: expected 'key = value', got 'not a pair'");
  EXPECT_FALSE(parse_key_values("a = \"open\n", "f").ok());
  EXPECT_FALSE(parse_key_values("[broken\n", "f").ok());
  EXPECT_FALSE(parse_key_values("bad key = 1\n", "f").ok());
}

TEST(KeyValues, format_round_trips_awkward_values) {
  for (std::string v : {"plain", "", " lead", "with # hash", "quote\"d", "back\\slash", "multi\nline", "[x]"}) {
    auto kv = parse_key_values(format_key_value("k", v) + "\n", "t");
    ASSERT_TRUE(kv.ok()) << v;
    ASSERT_EQ(kv->size(), 1u);
    EXPECT_EQ((*kv)[0].value, v);
  }
}

TEST(Integers, strict) {
  EXPECT_EQ(parse_integer("42"), 42);
  EXPECT_EQ(parse_integer("-3"), -3);
  EXPECT_EQ(parse_integer("+7"), 7);
  EXPECT_FALSE(parse_integer("4x"));
  EXPECT_FALSE(parse_integer(""));
  EXPECT_FALSE(parse_integer("99999999999999999999999"));
}

TEST(Integers, canonical_spelling_only) {
  EXPECT_EQ(parse_canonical_integer("0"), 0);
  EXPECT_EQ(parse_canonical_integer("17"), 17);
  EXPECT_EQ(parse_canonical_integer("-5"), -5);
  for (const char* bad : {"", "-", "017", "+2", "0002", "-0", "-07", " 1", "1 ", "1e3", "0x10", "1234567890123456789"})
    EXPECT_FALSE(parse_canonical_integer(bad).has_value()) << bad;
  EXPECT_EQ(parse_integer("+2"), 2); // the lenient parser, for ciq's own files, is unchanged
}

TEST(Printable, keeps_text_and_utf8) {
  EXPECT_EQ(printable("heavy_a(float const*, float*, int)"), "heavy_a(float const*, float*, int)");
  EXPECT_EQ(printable("k\xc3\xa9rnel \xe2\x82\xac \xf0\x9f\x98\x80"), "k\xc3\xa9rnel \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(printable(""), "");
  EXPECT_EQ(printable("a\\x1b"), "a\\x1b");  // a backslash is text
}

TEST(Printable, escapes_what_a_terminal_acts_on) {
  // A title-setting OSC sequence and a clear-screen CSI.
  EXPECT_EQ(printable("k\x1b]0;owned\x07\x1b[2J"), "k\\x1b]0;owned\\x07\\x1b[2J");
  EXPECT_EQ(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  // C1 controls as UTF-8: U+009B is a one-character CSI on some terminals.
  EXPECT_EQ(printable("\xc2\x9b" "2J \xc2\x80 \xc2\x9f \xc2\xa0"), "\\u009b2J \\u0080 \\u009f \xc2\xa0");
  // Bidirectional overrides reorder what is shown.
  EXPECT_EQ(printable("a\xe2\x80\xae" "b\xe2\x81\xa6"), "a\\u202eb\\u2066");
}

TEST(Printable, escapes_bytes_that_are_not_utf8) {
  EXPECT_EQ(printable("\x9b" "2J"), "\\x9b2J");                 // a raw C1 byte
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc3"), "\\xc3");                        // truncated
  EXPECT_EQ(printable("\xc0\x80"), "\\xc0\\x80");               // overlong NUL
  EXPECT_EQ(printable("\xe0\x80\x9b"), "\\xe0\\x80\\x9b");      // overlong CSI
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");      // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // past U+10FFFF
  EXPECT_EQ(printable("\xe2\x82" "a"), "\\xe2\\x82a");
}

TEST(Printable, lines_keep_newlines_only) {
  EXPECT_EQ(printable_lines("one\ntwo\r\n\x1b[31mred\t"), "one\ntwo\\r\n\\x1b[31mred\\t");
}

TEST(Csv, quotes_separators_quotes_and_line_breaks) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
  EXPECT_EQ(csv_field("a\rb"), "\"a\rb\"");
}

TEST(Text, glob_problem_names_an_unclosed_class_or_group) {
  EXPECT_EQ(glob_problem("[abc"), "the '[' at character 1 opens a character class that no ']' closes (a literal '[' is written [[])");
  EXPECT_NE(glob_problem("_Z*heavy_[ab"), "");
  EXPECT_EQ(glob_problem("x{a,b"), "the '{' at character 2 opens a group of alternatives that no '}' closes (a literal '{' is written [{])");
  for (const char* good : {"*", "_Z?heavy_[ab]*", "[!x]y", "[]]", "[[]x", "{a,b}", "a{,b}c", "*{lambda()#1}*", "{f<int[,]float>,g}", "[{]a,b", "x}",
                           "[!]]", "[a-z0-9_]", "[-a]", "[a-]", "[[:]"})
    EXPECT_EQ(glob_problem(good), "") << good;
}

// What a glob here would take silently and match nothing (or not what was
// meant) with: a negated class whose ']' is its member, a POSIX class
// name, a reversed range.
TEST(Text, glob_problem_names_what_would_silently_match_nothing) {
  EXPECT_EQ(glob_problem("x[!]"), "the '[' at character 2 opens a character class that no ']' closes (a literal '[' is written [[])");
  EXPECT_TRUE(glob_match("[!]]x", "ax"));
  EXPECT_FALSE(glob_match("[!]]x", "]x"));
  EXPECT_EQ(glob_problem("*[[:alpha:]]"), "the class at character 2 names a POSIX class ([:alpha:]), which globs here do not know: list its characters instead, as in [a-zA-Z]");
  EXPECT_EQ(glob_problem("k[z-a]"), "the range z-a in the class at character 2 is reversed and matches nothing (write a-z)");
  EXPECT_NE(glob_problem("{a,[9-0]}"), "");
}

TEST(Text, glob_option_problem_refuses_an_empty_or_malformed_glob_given) {
  EXPECT_EQ(glob_option_problem("--kernels", "", false), "");  // not given: every kernel
  EXPECT_EQ(glob_option_problem("--kernels", "", true), "--kernels '' selects no kernel: leave it out (or give '*') to select every kernel");
  EXPECT_EQ(glob_option_problem("--kernels", "x{a,b", true).rfind("--kernels 'x{a,b' is not a well-formed glob: the '{' at character 2", 0), 0u);
  EXPECT_EQ(glob_option_problem("--kernels", "_Z*{a,b}", true), "");
}

// A knob space and a capture name a toolkit by its release: the version up
// to its second dot.
TEST(Text, release_of_a_version) {
  EXPECT_EQ(ciq::release_of("13.0.88"), "13.0");
  EXPECT_EQ(ciq::release_of("12.8"), "12.8");
  EXPECT_EQ(ciq::release_of("13"), "13");
  EXPECT_EQ(ciq::release_of(""), "");
}
