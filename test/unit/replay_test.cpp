// ciq-replay's parts that need no GPU: relocation of the parameter buffer,
// comparison of outputs, the weights of captures, and the serve requests.
#include "tuner/replay/compare.h"
#include "tuner/replay/options.h"
#include "tuner/replay/plan.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::replay;

namespace {

std::uint64_t read_u64(const std::vector<std::uint8_t>& bytes, std::size_t at) {
  std::uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= std::uint64_t(bytes[at + b]) << (8 * b);
  return v;
}

/// saxpy(float* y @0, int n @8, float a @12, const float* x @16), y and x
/// in two allocations; x points 16 bytes into its allocation.
profile::Capture saxpy_capture() {
  profile::Capture c;
  c.dir = "/captures/100-0";
  c.kernel = "_Z5saxpyPfifPKf";
  c.params = {{0, 8}, {8, 4}, {12, 4}, {16, 8}};
  c.param_bytes.resize(24);
  for (std::size_t i = 0; i < c.param_bytes.size(); ++i) c.param_bytes[i] = std::uint8_t(0xa0 + i);
  c.allocations = {{0x7f0000000000, 64, "/captures/100-0/mem-0.bin", "", ""},
                   {0x7f0000100000, 64, "/captures/100-0/mem-1.bin", "", ""}};
  c.pointers = {{3, 1, 16}, {0, 0, 0}};
  return c;
}

std::vector<std::uint8_t> floats(std::initializer_list<float> values) {
  std::vector<std::uint8_t> out(values.size() * 4);
  std::size_t i = 0;
  for (float v : values) std::memcpy(out.data() + 4 * i++, &v, 4);
  return out;
}

CompareMode mode(const char* text) {
  auto m = parse_compare_mode(text);
  EXPECT_TRUE(m.ok()) << text;
  return m.ok() ? *m : CompareMode{};
}

} // namespace

TEST(ReplayPlan, relocation_moves_pointers_and_keeps_other_bytes) {
  auto c = saxpy_capture();
  auto bytes = relocated_params(c, {0x500000000, 0x600000000});
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 24u);
  EXPECT_EQ(read_u64(*bytes, 0), 0x500000000u);       // y: allocation 0 + 0
  EXPECT_EQ(read_u64(*bytes, 16), 0x600000000u + 16);  // x: allocation 1 + 16
  for (std::size_t i = 8; i < 16; ++i) EXPECT_EQ((*bytes)[i], c.param_bytes[i]) << "byte " << i;
}

TEST(ReplayPlan, relocation_needs_one_base_per_allocation) {
  auto c = saxpy_capture();
  auto bytes = relocated_params(c, {0x500000000});
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error().message.find("1 given for 2"), std::string::npos) << bytes.error().message;
}

TEST(ReplayPlan, params_into_lists_each_parameter_once_in_order) {
  auto c = saxpy_capture();
  c.pointers.push_back({0, 1, 0});
  EXPECT_EQ(params_into(c, 1), (std::vector<std::uint32_t>{0, 3}));
  EXPECT_EQ(params_into(c, 0), (std::vector<std::uint32_t>{0}));
}

TEST(ReplayPlan, plan_names_pointers_bytes_and_memory) {
  auto text = describe_plan(saxpy_capture());
  EXPECT_NE(text.find("param 3: offset 16, size 8: pointer to allocation 1 + 16 (was 0x7f0000100010)"), std::string::npos) << text;
  EXPECT_NE(text.find("param 1: offset 8, size 4: bytes a8a9aaab (unchanged)"), std::string::npos) << text;
  EXPECT_NE(text.find("allocation 1: 64 bytes from mem-1.bin (was 0x7f0000100000; param(s) 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("device memory: 256 bytes"), std::string::npos) << text;
}

TEST(ReplayPlan, total_is_the_launch_weighted_mean_of_medians) {
  auto a = saxpy_capture(), b = saxpy_capture();
  a.config_launches = 1;
  b.config_launches = 3;
  auto total = weighted_total_ms({a, b}, {1.0, 3.0});
  ASSERT_TRUE(total.ok());
  EXPECT_DOUBLE_EQ(*total, (1.0 * 1 + 3.0 * 3) / 4);
  b.config_launches = 0;  // counted none: weighs like one launch
  EXPECT_EQ(capture_weight(b), 1u);
  EXPECT_DOUBLE_EQ(*weighted_total_ms({a, b}, {1.0, 3.0}), 2.0);
  EXPECT_FALSE(weighted_total_ms({a, b}, {1.0}).ok());
  EXPECT_FALSE(weighted_total_ms({}, {}).ok());
}

TEST(ReplayPlan, median_of_odd_and_even_counts) {
  EXPECT_DOUBLE_EQ(median({5, 1, 100}), 5);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 100}), 3.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(ReplayCompare, parses_modes_and_refuses_others) {
  EXPECT_EQ(mode("bitwise").type, ElementType::bytes);
  auto f = mode("f32:1e-5");
  EXPECT_EQ(f.type, ElementType::f32);
  EXPECT_DOUBLE_EQ(f.tolerance, 1e-5);
  EXPECT_EQ(mode("bf16:0.01").type, ElementType::bf16);
  EXPECT_EQ(mode("f64:0").type, ElementType::f64);
  for (const char* bad : {"f32", "f32:", "f32:-1", "f32:nan", "f32:inf", "f32:1x", "int:1", "", "BITWISE"}) {
    auto m = parse_compare_mode(bad);
    EXPECT_FALSE(m.ok()) << bad;
    if (!m.ok()) {
      EXPECT_EQ(m.error().code, "usage");
    }
  }
  EXPECT_EQ(compare_mode_text(mode("f16:0.5")), "f16:0.5");
}

TEST(ReplayCompare, bitwise_names_the_first_differing_byte) {
  auto c = saxpy_capture();
  std::vector<HostBytes> expected = {HostBytes(64, 0), HostBytes(64, 7)};
  auto got = expected;
  EXPECT_FALSE(first_difference(c, mode("bitwise"), expected, got));
  got[1][40] = 9;
  got[1][50] = 9;
  auto d = first_difference(c, mode("bitwise"), expected, got);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->allocation, 1u);
  EXPECT_EQ(d->params, (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(d->byte_offset, 40u);
  EXPECT_EQ(d->differing, 2u);
  EXPECT_EQ(wrong_answer_message(mode("bitwise"), *d),
            "wrong answer: allocation 1 (parameter 3) differs at byte 40: expected 0x07, got 0x09; 2 byte(s) differ");
}

TEST(ReplayCompare, tolerance_is_absolute_below_one_and_relative_above) {
  auto c = saxpy_capture();
  c.allocations.resize(1);
  auto m = mode("f32:1e-3");
  EXPECT_FALSE(first_difference(c, m, {floats({1000.0f, 0.5f})}, {floats({1000.5f, 0.5009f})}));
  auto d = first_difference(c, m, {floats({1000.0f, 0.5f, 2.0f})}, {floats({1000.5f, 0.502f, 2.1f})});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->element, 1u);
  EXPECT_EQ(d->byte_offset, 4u);
  EXPECT_EQ(d->differing, 2u);
  EXPECT_EQ(d->expected, "0.5 (0x3f000000)");
  std::string message = wrong_answer_message(m, *d);
  EXPECT_EQ(message.rfind("wrong answer: allocation 0 (parameter 0) differs at f32 element 1 (byte 4): expected 0.5 (0x3f000000), got 0.50199", 0), 0u) << message;
  EXPECT_NE(message.find("2 element(s) differ beyond the tolerance (--compare f32:0.001"), std::string::npos) << message;
}

TEST(ReplayCompare, nan_agrees_only_with_the_same_bits) {
  auto c = saxpy_capture();
  c.allocations.resize(1);
  auto m = mode("f32:0.5");
  float quiet = std::nanf("");
  std::uint32_t other_bits = 0x7fc00001;
  float other;
  std::memcpy(&other, &other_bits, 4);
  EXPECT_FALSE(first_difference(c, m, {floats({quiet})}, {floats({quiet})}));
  EXPECT_TRUE(first_difference(c, m, {floats({quiet})}, {floats({other})}));
  EXPECT_TRUE(first_difference(c, m, {floats({quiet})}, {floats({1.0f})}));
  EXPECT_TRUE(first_difference(c, m, {floats({1.0f})}, {floats({quiet})}));
  EXPECT_TRUE(first_difference(c, m, {floats({INFINITY})}, {floats({1e30f})}));
  EXPECT_FALSE(first_difference(c, m, {floats({INFINITY})}, {floats({INFINITY})}));
  EXPECT_FALSE(first_difference(c, m, {floats({0.0f})}, {floats({-0.0f})}));
  EXPECT_TRUE(first_difference(c, mode("bitwise"), {floats({0.0f})}, {floats({-0.0f})}));
}

TEST(ReplayCompare, half_and_bfloat16_elements) {
  auto c = saxpy_capture();
  c.allocations.resize(1);
  HostBytes one = {0x00, 0x3c}, next = {0x01, 0x3c};  // f16 1.0 and 1.0009766
  EXPECT_FALSE(first_difference(c, mode("f16:1e-2"), {one}, {next}));
  auto d = first_difference(c, mode("f16:1e-4"), {one}, {next});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->expected, "1 (0x3c00)");
  HostBytes bf_one = {0x80, 0x3f}, bf_two = {0x00, 0x40};  // bf16 1.0 and 2.0
  EXPECT_FALSE(first_difference(c, mode("bf16:1"), {bf_one}, {bf_two}));
  d = first_difference(c, mode("bf16:0.5"), {bf_one}, {bf_two});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->got, "2 (0x4000)");
}

TEST(ReplayCompare, bytes_past_the_last_element_compare_bitwise) {
  auto c = saxpy_capture();
  c.allocations.resize(1);
  HostBytes expected = floats({1.0f}), got;
  expected.push_back(1);
  expected.push_back(2);
  got = expected;
  got[5] = 3;
  auto d = first_difference(c, mode("f32:1"), {expected}, {got});
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->trailing_byte);
  EXPECT_EQ(d->byte_offset, 5u);
  EXPECT_NE(wrong_answer_message(mode("f32:1"), *d).find("differs at trailing byte 5: expected 0x02, got 0x03"), std::string::npos);
}

TEST(ReplayCompare, a_size_difference_is_named) {
  auto c = saxpy_capture();
  auto d = first_difference(c, mode("bitwise"), {HostBytes(4)}, {HostBytes(8)});
  ASSERT_TRUE(d);
  EXPECT_EQ(wrong_answer_message(mode("bitwise"), *d), "wrong answer: allocation 0 (parameter 0) has 8 bytes, not the reference's 4 bytes");
}

TEST(ReplayCompare, faithfulness_compares_after_digests) {
  auto c = saxpy_capture();
  HostBytes a(64, 1), b(64, 2);
  c.allocations[0].after_xxh128 = digest_hex(a);
  c.allocations[1].after_xxh128 = "";  // not recorded: not judged
  EXPECT_TRUE(unfaithful_allocations(c, {a, b}).empty());
  std::string upper = digest_hex(a);
  for (auto& ch : upper) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  c.allocations[0].after_xxh128 = upper;
  EXPECT_TRUE(unfaithful_allocations(c, {a, b}).empty());
  c.allocations[0].after_xxh128 = digest_hex(b);
  EXPECT_EQ(unfaithful_allocations(c, {a, b}), (std::vector<std::uint32_t>{0}));
}

TEST(ReplayOptions, run_needs_a_cubin_and_a_capture) {
  auto o = parse_command_line({"run", "--cubin=k.cubin", "--samples", "5", "--compare", "f32:1e-4", "cap"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->mode, Mode::run);
  EXPECT_EQ(o->cubin, "k.cubin");
  EXPECT_EQ(o->samples, 5);
  EXPECT_EQ(o->compare.type, ElementType::f32);
  EXPECT_EQ(o->captures, (std::vector<std::string>{"cap"}));
  EXPECT_FALSE(parse_command_line({"run", "cap"}).ok());
  EXPECT_FALSE(parse_command_line({"run", "--cubin", "k.cubin"}).ok());
  EXPECT_FALSE(parse_command_line({"run", "--cubin"}).ok());
  EXPECT_FALSE(parse_command_line({"run", "--cubin", "k", "--samples", "0", "cap"}).ok());
  EXPECT_FALSE(parse_command_line({"serve", "--cubin", "k", "cap"}).ok());
  auto unknown = parse_command_line({"plan", "--frobnicate", "cap"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("--frobnicate"), std::string::npos);
  EXPECT_EQ(parse_command_line({}).error().message, "no mode given: plan, run or serve (ciq-replay --help)");
  EXPECT_EQ(parse_command_line({"run", "--help"}).value().mode, Mode::help);
}

TEST(ReplayOptions, request_words) {
  auto r = parse_request({"--cubin", "/w/k.cubin", "--samples", "7", "--check"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cubin, "/w/k.cubin");
  EXPECT_EQ(r->samples, 7);
  EXPECT_TRUE(r->check);
  r = parse_request({"--cubin=/w/k.cubin"});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->samples);
  EXPECT_FALSE(r->check);
  auto stray = parse_request({"--cubin", "k", "--no-such"});
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(stray.error().message.find("'--no-such'"), std::string::npos);
  EXPECT_FALSE(parse_request({"--check"}).ok());
}

TEST(ReplayOptions, wire_requests_and_answers) {
  std::string text = "ciq-request: 7\n--cubin\nk.cubin\n\n--cubin\nold.cubin\n\n\nciq-request: 8\n--check";
  std::FILE* in = fmemopen(text.data(), text.size(), "r");
  ASSERT_NE(in, nullptr);
  auto a = read_wire_request(in);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->id, "7");
  EXPECT_EQ(a->words, (std::vector<std::string>{"--cubin", "k.cubin"}));
  auto b = read_wire_request(in);
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->id);
  EXPECT_EQ(b->words, (std::vector<std::string>{"--cubin", "old.cubin"}));
  auto c = read_wire_request(in);  // ends without an empty line
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, "8");
  EXPECT_EQ(c->words, (std::vector<std::string>{"--check"}));
  EXPECT_FALSE(read_wire_request(in));
  std::fclose(in);
  EXPECT_EQ(format_answer({"time_ms: 1.5"}, 0, std::string("7")), "time_ms: 1.5\nciq-status: 7 0\n");
  EXPECT_EQ(format_answer({}, 1, std::nullopt), "ciq-status: 1\n");
}
