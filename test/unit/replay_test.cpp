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
formats::Capture saxpy_capture() {
  formats::Capture c;
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

TEST(ReplayCompare, tolerance_is_relative_plus_absolute) {
  auto c = saxpy_capture();  // saxpy(float*, int, float, float const*): both allocations f32
  c.allocations.resize(1);
  auto m = mode("rtol=1e-3,atol=1e-3");
  // |got - expected| <= atol + rtol * |expected|: 1.5e-3 off 1 is within
  // 1e-3 + 1e-3 (the old max(1, |expected|) rule allowed only 1e-3).
  EXPECT_FALSE(first_difference(c, m, {floats({1000.0f, 1.0f})}, {floats({1000.9f, 1.0015f})}));
  auto d = first_difference(c, m, {floats({1000.0f, 0.5f, 2.0f})}, {floats({1002.5f, 0.502f, 2.1f})});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->type, ElementType::f32);
  EXPECT_EQ(d->element, 0u);
  EXPECT_EQ(d->differing, 3u);
  EXPECT_EQ(d->expected, "1000 (0x447a0000)");
  std::string message = wrong_answer_message(m, *d);
  EXPECT_EQ(message, "wrong answer: allocation 0 (parameter 0) differs at f32 element 0 (byte 0): expected 1000 (0x447a0000), "
                     "got 1002.5 (0x447aa000); 3 element(s) differ beyond the tolerance (--compare rtol=0.001,atol=0.001: "
                     "f32 elements agree when |got - expected| <= 0.001 + 0.001 * |expected|)");
}

TEST(ReplayCompare, small_outputs_replaced_by_zeros_differ) {
  // Issue 46, 4: with the old f32:1e-3 (absolute below 1), outputs of
  // about 1e-4 replaced by zeros were "the same".
  auto c = saxpy_capture();
  c.allocations.resize(1);
  HostBytes expected = floats({1e-4f, 2e-4f, 0.5e-4f}), zeros = floats({0, 0, 0});
  for (const char* m : {"close", "rtol=1e-3,atol=1e-6"}) {
    auto d = first_difference(c, mode(m), {expected}, {zeros});
    ASSERT_TRUE(d) << m;
    EXPECT_EQ(d->differing, 3u) << m;
  }
  // Differences of fmad's size (a few ulps) stay within the default.
  HostBytes near = floats({1.00001e-4f, 2e-4f, 0.5e-4f});
  EXPECT_FALSE(first_difference(c, mode("close"), {expected}, {near}));
}

TEST(ReplayCompare, integer_outputs_compare_bitwise_whatever_the_tolerance) {
  // Issue 46, 3: int32 1,2,3,4 against 7,100,99999,0 are f32 denormals and
  // were "the same" under any f32 tolerance.
  auto c = saxpy_capture();
  c.kernel = "_Z5countPiiiPKi";  // count(int*, int, int, int const*)
  c.allocations.resize(1);
  auto ints = [](std::initializer_list<std::int32_t> values) {
    HostBytes out(values.size() * 4);
    std::size_t i = 0;
    for (auto v : values) std::memcpy(out.data() + 4 * i++, &v, 4);
    return out;
  };
  auto m = mode("rtol=1,atol=1e30");
  auto d = first_difference(c, m, {ints({1, 2, 3, 4})}, {ints({7, 100, 99999, 0})});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->type, ElementType::bytes);
  EXPECT_EQ(wrong_answer_message(m, *d),
            "wrong answer: allocation 0 (parameter 0) differs at byte 0: expected 0x01, got 0x07; 6 byte(s) differ "
            "(compared bitwise under --compare rtol=1,atol=1e+30: parameter 0 is int*)");
  EXPECT_FALSE(first_difference(c, m, {ints({1, 2})}, {ints({1, 2})}));
}

TEST(ReplayCompare, an_allocation_of_disputed_or_unknown_type_compares_bitwise) {
  auto c = saxpy_capture();
  HostBytes one = floats({1.0f}), near = floats({1.000001f});
  std::vector<HostBytes> expected = {one, one}, got = {near, one};
  // Both f32: within the default.
  EXPECT_FALSE(first_difference(c, mode("close"), expected, got));
  // A Triton kernel: no C++ signature, so no element type.
  c.kernel = "triton_poi_fused_add_0";
  auto d = first_difference(c, mode("close"), expected, got);
  ASSERT_TRUE(d);
  EXPECT_NE(wrong_answer_message(mode("close"), *d).find("no C++ signature"), std::string::npos);
  // float* and int* into one allocation: bitwise.
  c = saxpy_capture();
  c.kernel = "_Z5saxpyPfifPKi";
  c.pointers.push_back({3, 0, 0});
  d = first_difference(c, mode("close"), expected, got);
  ASSERT_TRUE(d);
  EXPECT_NE(wrong_answer_message(mode("close"), *d).find("parameters 0 and 3 disagree: float*, int const*"), std::string::npos)
      << wrong_answer_message(mode("close"), *d);
}

TEST(ReplayCompare, nan_agrees_with_nan_and_infinity_with_itself) {
  auto c = saxpy_capture();
  c.allocations.resize(1);
  auto m = mode("rtol=0.5,atol=0.5");
  float quiet = std::nanf("");
  std::uint32_t other_bits = 0x7fc00001;
  float other;
  std::memcpy(&other, &other_bits, 4);
  EXPECT_FALSE(first_difference(c, m, {floats({quiet})}, {floats({quiet})}));
  EXPECT_FALSE(first_difference(c, m, {floats({quiet})}, {floats({other})}));  // a NaN's payload is the code's
  EXPECT_TRUE(first_difference(c, m, {floats({quiet})}, {floats({1.0f})}));
  EXPECT_TRUE(first_difference(c, m, {floats({1.0f})}, {floats({quiet})}));
  EXPECT_TRUE(first_difference(c, m, {floats({INFINITY})}, {floats({1e30f})}));
  EXPECT_TRUE(first_difference(c, m, {floats({INFINITY})}, {floats({-INFINITY})}));
  EXPECT_TRUE(first_difference(c, m, {floats({1e30f})}, {floats({INFINITY})}));
  EXPECT_FALSE(first_difference(c, m, {floats({INFINITY})}, {floats({INFINITY})}));
  EXPECT_FALSE(first_difference(c, m, {floats({0.0f})}, {floats({-0.0f})}));
  EXPECT_TRUE(first_difference(c, mode("bitwise"), {floats({0.0f})}, {floats({-0.0f})}));
  EXPECT_TRUE(first_difference(c, mode("bitwise"), {floats({quiet})}, {floats({other})}));
}

TEST(ReplayCompare, each_allocation_is_compared_as_its_own_type) {
  auto c = saxpy_capture();
  c.allocations.resize(1);
  c.kernel = "_Z4halfP6__halfifPKS_";  // half(__half*, int, float, __half const*)
  HostBytes one = {0x00, 0x3c}, next = {0x01, 0x3c}, far = {0x08, 0x3c};  // f16 1.0, 1.0009766, 1.0078125
  EXPECT_FALSE(first_difference(c, mode("close"), {one}, {next}));  // one ulp: within f16's default
  auto d = first_difference(c, mode("close"), {one}, {far});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->type, ElementType::f16);
  EXPECT_EQ(d->expected, "1 (0x3c00)");
  EXPECT_NE(wrong_answer_message(mode("close"), *d).find("f16 elements agree when |got - expected| <= 1e-05 + 0.002 * |expected|"),
            std::string::npos)
      << wrong_answer_message(mode("close"), *d);
  c.kernel = "_Z4bf16P13__nv_bfloat16ifPKS_";
  HostBytes bf_one = {0x80, 0x3f}, bf_next = {0x81, 0x3f}, bf_two = {0x00, 0x40};  // bf16 1.0, 1.0078125, 2.0
  EXPECT_FALSE(first_difference(c, mode("close"), {bf_one}, {bf_next}));  // one ulp of bf16: within its default
  EXPECT_TRUE(first_difference(c, mode("rtol=1e-3,atol=0"), {bf_one}, {bf_next}));
  EXPECT_FALSE(first_difference(c, mode("rtol=1,atol=0"), {bf_one}, {bf_two}));
  d = first_difference(c, mode("rtol=0.5,atol=0"), {bf_one}, {bf_two});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->got, "2 (0x4000)");
  c.kernel = "_Z3dblPdifPKd";
  EXPECT_FALSE(first_difference(c, mode("close"), {HostBytes(8, 0)}, {HostBytes(8, 0)}));
  double x = 1.0, y = 1.0 + 1e-14, z = 1.0 + 1e-12;
  HostBytes bx(8), by(8), bz(8);
  std::memcpy(bx.data(), &x, 8);
  std::memcpy(by.data(), &y, 8);
  std::memcpy(bz.data(), &z, 8);
  EXPECT_FALSE(first_difference(c, mode("close"), {bx}, {by}));
  EXPECT_TRUE(first_difference(c, mode("close"), {bx}, {bz}));
}

TEST(ReplayCompare, bytes_past_the_last_element_compare_bitwise) {
  auto c = saxpy_capture();
  c.allocations.resize(1);
  HostBytes expected = floats({1.0f}), got;
  expected.push_back(1);
  expected.push_back(2);
  got = expected;
  got[5] = 3;
  auto d = first_difference(c, mode("rtol=1,atol=1"), {expected}, {got});
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->trailing_byte);
  EXPECT_EQ(d->byte_offset, 5u);
  EXPECT_NE(wrong_answer_message(mode("rtol=1,atol=1"), *d).find("differs at trailing byte 5: expected 0x02, got 0x03"),
            std::string::npos);
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
  auto o = parse_command_line({"run", "--cubin=k.cubin", "--samples", "5", "--compare", "rtol=1e-4,atol=0", "cap"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->mode, Mode::run);
  EXPECT_EQ(o->cubin, "k.cubin");
  EXPECT_EQ(o->samples, 5);
  EXPECT_EQ(o->compare.kind, CompareKind::close);
  EXPECT_DOUBLE_EQ(o->compare.tolerance.rtol, 1e-4);
  EXPECT_FALSE(parse_command_line({"run", "--cubin", "k", "--compare", "f32:1e-4", "cap"}).ok());
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
