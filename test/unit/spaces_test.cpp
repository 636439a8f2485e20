#include "spaces/render.h"
#include "spaces/space.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::spaces;

namespace {
const char* k_space = R"(
[space]
name = test-1
tool = ptxas
versions = 13.0..13.9

[option.maxrregcount]
render = --maxrregcount={}
range = 16..255
default = none
safety = exact

[option.level]
render = --level={}
range = 0..10
step = 2
safety = exact

[option.fmad]
render = --fmad={}
values = true, false
safety = numerics

[option.flag]
render = --flag
values = on
safety = exact

[directive.maxnreg]
render = .maxnreg {}
range = 16..255
safety = exact

[directive.maxntid]
render = .maxntid {}
dims = 1..1024
safety = unsafe
)";

Space space() {
  auto s = parse_space(k_space, "test.space");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return *s;
}

spaces::ControlSet controls(std::initializer_list<const char*> assignments) {
  spaces::ControlSet c;
  c.space = "test-1";
  for (auto a : assignments) EXPECT_TRUE(spaces::add_assignment(c, a).ok()) << a;
  return c;
}
} // namespace

TEST(Space, parses_levels_domains_and_versions) {
  Space s = space();
  EXPECT_EQ(s.knobs.size(), 6u);
  EXPECT_TRUE(s.covers("ptxas", "13.0"));
  EXPECT_TRUE(s.covers("ptxas", "13.9"));
  EXPECT_FALSE(s.covers("ptxas", "13.10"));
  EXPECT_FALSE(s.covers("ptxas", "12.8"));
  EXPECT_FALSE(s.covers("nvcc", "13.0"));
  EXPECT_EQ(s.find("level", KnobLevel::option)->domain(), (std::vector<std::string>{"0", "2", "4", "6", "8", "10"}));
  EXPECT_EQ(s.find("maxnreg", KnobLevel::option), nullptr);
  EXPECT_NE(s.find("maxnreg", KnobLevel::directive), nullptr);
}

TEST(Space, strict_parse_errors) {
  EXPECT_FALSE(parse_space("[space]\nname = x\ntool = ptxas\n", "f").ok());                       // no versions
  EXPECT_FALSE(parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[option.a]\nrender=--a={}\n", "f").ok()); // no domain
  EXPECT_FALSE(parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[option.a]\nrender=--a\nrange=1..2\n", "f").ok());
  EXPECT_FALSE(parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[option.a]\nrender=--a={}\nrange=5..2\n", "f").ok());
  EXPECT_FALSE(parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[option.a]\nrender=--a={}\nvalues=1\nsafety=maybe\n", "f").ok());
  EXPECT_FALSE(parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[option.a]\nrender=--a={}\nvalues=1\ncolour=red\n", "f").ok());
  EXPECT_FALSE(parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[knob.a]\nvalues=1\n", "f").ok());
  auto dup = parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[option.a]\nrender=--a={}\nvalues=1\n[directive.b]\n"
                         "render=.b {}\nvalues=1\n[option.a]\nvalues=2\n",
                         "f");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("defined twice"), std::string::npos);
}

// A range spells out its whole domain (Knob::domain), so a hostile or
// mistyped space file must not make it billions of values long (the fuzzer
// found 0..2^40 exhausting memory) nor overflow at its ends.
TEST(Space, ranges_are_bounded) {
  auto with = [](std::string range) {
    return parse_space("[space]\nname=x\ntool=p\nversions=1.0..2.0\n[option.a]\nrender=--a={}\n" + range, "f");
  };
  auto wide = with("range=0..100000\n");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message.find("holds more than 4096 values"), std::string::npos) << wide.error().message;
  EXPECT_TRUE(with("range=0..100000\nstep=1000\n").ok());
  EXPECT_FALSE(with("range=0..9223372036854775807\nstep=2147483647\n").ok());
  EXPECT_FALSE(with("range=-9223372036854775807..0\n").ok());
  EXPECT_FALSE(with("range=0..10\nstep=4294967296\n").ok());
  auto top = with("range=2147483640..2147483647\nstep=5\n");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->knobs[0].domain(), (std::vector<std::string>{"2147483640", "2147483645"}));
}

TEST(Space, validation_is_the_whitelist) {
  Space s = space();
  Policy policy;
  EXPECT_TRUE(validate_controls(s, controls({"maxrregcount=64", "k:maxnreg=32", "flag=on", "level=4"}), policy).ok());
  EXPECT_FALSE(validate_controls(s, controls({"maxrregcount=8"}), policy).ok());
  EXPECT_FALSE(validate_controls(s, controls({"maxrregcount=abc"}), policy).ok());
  EXPECT_FALSE(validate_controls(s, controls({"level=3"}), policy).ok()); // off-step
  EXPECT_FALSE(validate_controls(s, controls({"inject=1"}), policy).ok());
  EXPECT_FALSE(validate_controls(s, controls({"maxnreg=32"}), policy).ok());      // directive as option
  EXPECT_FALSE(validate_controls(s, controls({"k:maxrregcount=32"}), policy).ok()); // option as directive
  EXPECT_FALSE(validate_controls(s, controls({"fmad=maybe"}), policy).ok());
  spaces::ControlSet other = controls({"maxrregcount=64"});
  other.space = "test-2";
  EXPECT_FALSE(validate_controls(s, other, policy).ok());
}

// One spelling per value: what ptxas would read as another number ("017"
// is octal 15), or what would slip past a range or conflict check as
// another value ("0002", "+2", 60,000 digits), is refused.
TEST(Space, integer_values_must_be_canonical) {
  Space s = space();
  Policy policy;
  EXPECT_TRUE(validate_controls(s, controls({"maxrregcount=17"}), policy).ok());
  for (const char* bad : {"maxrregcount=017", "maxrregcount=+32", "maxrregcount=0032", "maxrregcount= 32",
                          "level=-0", "level=00", "k:maxnreg=064"}) {
    auto c = controls({});
    auto [knob, value] = std::pair{std::string(bad).substr(0, std::string(bad).find('=')),
                                   std::string(bad).substr(std::string(bad).find('=') + 1)};
    if (knob.find(':') != std::string::npos)
      c.kernels[knob.substr(0, knob.find(':'))][knob.substr(knob.find(':') + 1)] = value;
    else
      c.options[knob] = value;
    auto r = validate_controls(s, c, policy);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("without leading zeros or '+'"), std::string::npos) << r.error().message;
  }
  auto huge = controls({});
  huge.options["maxrregcount"] = std::string(60000, '0') + "32";
  auto r = validate_controls(s, huge, policy);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.error().message.size(), 300u); // the message does not repeat 60,000 digits
  EXPECT_TRUE(validate_controls(s, controls({"level=0"}), policy).ok());
}

TEST(Space, conflicts_refuse_pairs_the_compiler_refuses) {
  std::string text = std::string(k_space) + "\n[conflict.fast]\nwhen = level: 8, 10\nexcludes = maxrregcount: 16, 32\nnote = x\n";
  auto parsed = parse_space(text, "test.space");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Space& s = *parsed;
  ASSERT_EQ(s.conflicts.size(), 1u);
  EXPECT_EQ(s.conflicts[0].excluded_values, (std::vector<std::string>{"16", "32"}));
  Policy policy;
  auto bad = validate_controls(s, controls({"level=10", "maxrregcount=32"}), policy);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "knobs level=10 and maxrregcount=32 conflict in space test-1 (fast)");
  EXPECT_TRUE(validate_controls(s, controls({"level=6", "maxrregcount=32"}), policy).ok());  // other value
  EXPECT_TRUE(validate_controls(s, controls({"level=10", "maxrregcount=64"}), policy).ok());
  EXPECT_TRUE(validate_controls(s, controls({"level=10"}), policy).ok()); // only one of the two
  EXPECT_TRUE(validate_controls(s, controls({"level=10", "k:maxnreg=32"}), policy).ok());

  std::string head = std::string(k_space) + "\n[conflict.c]\n";
  EXPECT_FALSE(parse_space(head + "when = level: 8\n", "f").ok());                          // no excludes
  EXPECT_FALSE(parse_space(head + "when = level: 8\nexcludes = nosuch: 1\n", "f").ok());   // unknown knob
  EXPECT_FALSE(parse_space(head + "when = level: 9\nexcludes = fmad: false\n", "f").ok()); // off-step value
  EXPECT_FALSE(parse_space(head + "when = level: 8\nexcludes = maxnreg: 32\n", "f").ok()); // a directive
  EXPECT_FALSE(parse_space(head + "when = level 8\nexcludes = fmad: false\n", "f").ok());  // no colon
  EXPECT_FALSE(parse_space(head + "when = level: 8\nexcludes = level: 6\n", "f").ok());    // one knob
  EXPECT_FALSE(parse_space(head + "when = level: 8\nexcludes = fmad: false\nwhy = x\n", "f").ok());
}

// What ptxas takes but ignores (a conflict with effect = ignored, a floor,
// needs, unit) is data of the space: parsed, checked against the knobs it
// names, and, being compilable, no reason to refuse a control set.
TEST(Space, ignored_conflicts_floors_needs_and_units) {
  std::string text = std::string(k_space) +
                     "\n[option.minnctapersm]\nrender = --minnctapersm={}\nrange = 1..32\nneeds = maxntid, reqntid\n"
                     "unit = blocks-per-sm\n"
                     "\n[conflict.regs]\nwhen = maxrregcount: *\nexcludes = minnctapersm: *\neffect = ignored\n"
                     "\n[conflict.fast]\nwhen = level: 10\nexcludes = maxrregcount: 16\neffect = refused\n";
  auto floored = text;
  floored.replace(floored.find("range = 16..255"), 15, "range = 16..255\nfloor = 24");
  auto parsed = parse_space(floored, "test.space");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Space& s = *parsed;
  EXPECT_EQ(s.find("maxrregcount", KnobLevel::option)->floor, 24);
  const Knob* m = s.find("minnctapersm", KnobLevel::option);
  EXPECT_EQ(m->needs, (std::vector<std::string>{"maxntid", "reqntid"}));
  EXPECT_TRUE(m->blocks_per_sm);
  ASSERT_EQ(s.conflicts.size(), 2u);
  EXPECT_EQ(s.conflicts[0].effect, ConflictEffect::ignored);
  EXPECT_TRUE(s.conflicts[0].names(true, "200"));  // `*`: any value
  EXPECT_TRUE(s.conflicts[0].hit({{"maxrregcount", "64"}, {"minnctapersm", "2"}}));
  EXPECT_EQ(s.conflicts[1].effect, ConflictEffect::refused);
  Policy policy;
  // ptxas compiles an ignored pair (dropping minnctapersm) and a value below
  // the floor (raising it): the set stays valid, unlike a refused pair.
  EXPECT_TRUE(validate_controls(s, controls({"maxrregcount=64", "minnctapersm=2"}), policy).ok());
  EXPECT_TRUE(validate_controls(s, controls({"maxrregcount=16"}), policy).ok());
  EXPECT_FALSE(validate_controls(s, controls({"level=10", "maxrregcount=16"}), policy).ok());

  auto fails = [&](const std::string& from, const std::string& to, const char* why) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    auto r = parse_space(t, "f");
    ASSERT_FALSE(r.ok()) << to;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  };
  fails("range = 16..255", "range = 16..255\nfloor = 16", "floor needs an integer range");   // nothing below it
  fails("range = 16..255", "range = 16..255\nfloor = 300", "floor needs an integer range");  // outside
  fails("values = true, false", "values = true, false\nfloor = 1", "floor needs an integer range");
  fails("range = 16..255", "range = 16..255\nfloor = x", "floor must be an integer");
  fails("needs = maxntid, reqntid", "needs = maxnreg", "only maxntid and reqntid");
  fails("unit = blocks-per-sm", "unit = threads", "unit must be blocks-per-sm");
  fails("values = true, false", "values = true, false\nunit = blocks-per-sm", "needs an integer range");
  fails("effect = ignored", "effect = warns", "effect must be refused or ignored");
  fails("excludes = minnctapersm: *", "excludes = minnctapersm: *, 3", "value '*'");
  fails("excludes = minnctapersm: *", "excludes = nosuch: *", "'nosuch' is not an option");
}

TEST(Space, safety_classes_follow_the_policy) {
  Space s = space();
  Policy strict;
  strict.allow_numerics = false;
  EXPECT_FALSE(validate_controls(s, controls({"fmad=false"}), strict).ok());
  EXPECT_TRUE(validate_controls(s, controls({"fmad=false"}), Policy{}).ok());
  EXPECT_FALSE(validate_controls(s, controls({"k:maxntid=128"}), Policy{}).ok());
  Policy unsafe;
  unsafe.allow_unsafe = true;
  EXPECT_TRUE(validate_controls(s, controls({"k:maxntid=128,2"}), unsafe).ok());
  EXPECT_FALSE(validate_controls(s, controls({"k:maxntid=128,2,1,1"}), unsafe).ok());
  EXPECT_FALSE(validate_controls(s, controls({"k:maxntid=0"}), unsafe).ok());
}

TEST(Render, options_and_flags) {
  Space s = space();
  auto r = render_controls(s, controls({"maxrregcount=64", "flag=on", "k:maxnreg=32"}));
  EXPECT_EQ(r.options, (std::vector<std::string>{"--flag", "--maxrregcount=64"}));
  ASSERT_EQ(r.directives.at("k").size(), 1u);
  EXPECT_EQ(r.directives.at("k")[0].line, ".maxnreg 32");
  EXPECT_EQ(r.directives.at("k")[0].keyword, ".maxnreg");
}

TEST(Render, directives_replace_existing_values_in_the_named_kernel_only) {
  std::string ptx = ".version 9.0\n.visible .entry k(\n\t.param .u64 p\n)\n.maxnreg 200\n.maxntid 64, 1, 1\n{\n\tret;\n}\n"
                    ".visible .entry k2(\n)\n.maxnreg 100\n{\n\tret;\n}\n";
  std::vector<std::string> applied;
  auto out = apply_directives(ptx, {{"k", {{".maxnreg", ".maxnreg 32"}}}, {"absent", {{".maxnreg", ".maxnreg 1"}}}},
                              &applied);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(applied, (std::vector<std::string>{"k"}));
  EXPECT_EQ(*out, ".version 9.0\n.visible .entry k(\n\t.param .u64 p\n)\n.maxnreg 32\n\n.maxntid 64, 1, 1\n{\n\tret;\n}\n"
                  ".visible .entry k2(\n)\n.maxnreg 100\n{\n\tret;\n}\n");
}

TEST(Render, kernel_name_prefixes_do_not_match) {
  std::string ptx = ".visible .entry kernel_long(\n)\n{\nret;\n}\n.visible .entry kernel(\n)\n{\nret;\n}\n";
  auto out = apply_directives(ptx, {{"kernel", {{".maxnreg", ".maxnreg 40"}}}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, ".visible .entry kernel_long(\n)\n{\nret;\n}\n.visible .entry kernel(\n)\n.maxnreg 40\n{\nret;\n}\n");
}
