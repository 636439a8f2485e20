// The --compare spelling both ciq-replay and ciq-tuner read
// (tuner/formats/compare_mode.h), and the element types a kernel's
// signature gives its pointer parameters (tuner/replay/param_types.h).
#include "tuner/formats/compare_mode.h"
#include "tuner/replay/param_types.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::formats;
using ciq::replay::allocation_types;
using ciq::replay::kernel_param_types;

TEST(CompareMode, reads_bitwise_close_and_spelled_out_tolerances) {
  auto bitwise = parse_compare_mode("bitwise");
  ASSERT_TRUE(bitwise.ok());
  EXPECT_EQ(bitwise->kind, CompareKind::bitwise);
  auto close = parse_compare_mode("close");
  ASSERT_TRUE(close.ok());
  EXPECT_EQ(close->kind, CompareKind::close);
  EXPECT_FALSE(close->given_tolerance);
  EXPECT_DOUBLE_EQ(tolerance_for(*close, ElementType::bf16).rtol, 1.6e-2);
  EXPECT_DOUBLE_EQ(tolerance_for(*close, ElementType::f32).atol, 1e-5);
  for (const char* text : {"rtol=1e-3,atol=1e-6", "atol=1e-6,rtol=1e-3", "rtol=0.001,atol=.000001"}) {
    auto m = parse_compare_mode(text);
    ASSERT_TRUE(m.ok()) << text;
    EXPECT_EQ(m->kind, CompareKind::close);
    EXPECT_TRUE(m->given_tolerance);
    EXPECT_DOUBLE_EQ(m->tolerance.rtol, 1e-3) << text;
    EXPECT_DOUBLE_EQ(m->tolerance.atol, 1e-6) << text;
    EXPECT_DOUBLE_EQ(tolerance_for(*m, ElementType::bf16).rtol, 1e-3);  // given: for every type
    EXPECT_EQ(compare_mode_text(*m), "rtol=0.001,atol=1e-06");
  }
  auto zero = parse_compare_mode("rtol=0,atol=0");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(compare_mode_text(*zero), "rtol=0,atol=0");
}

TEST(CompareMode, the_text_reads_back_as_the_same_mode) {
  for (const char* text : {"bitwise", "close", "rtol=0.1,atol=0.2", "rtol=1.2345678901234567e-07,atol=3"}) {
    auto m = parse_compare_mode(text);
    ASSERT_TRUE(m.ok()) << text;
    auto again = parse_compare_mode(compare_mode_text(*m));
    ASSERT_TRUE(again.ok()) << compare_mode_text(*m);
    EXPECT_EQ(again->kind, m->kind);
    EXPECT_EQ(again->tolerance.rtol, m->tolerance.rtol) << text;
    EXPECT_EQ(again->tolerance.atol, m->tolerance.atol) << text;
  }
}

TEST(CompareMode, refuses_everything_else_as_usage) {
  for (const char* bad : {"", "BITWISE", "close,", "allclose", "rtol=1e-3", "atol=1e-6", "rtol=1e-3,", "rtol=1,rtol=2,atol=1",
                          "rtol=-1,atol=0", "rtol=+1,atol=0", "rtol=nan,atol=0", "rtol=inf,atol=0", "rtol=1e999,atol=0",
                          "rtol= 1,atol=0", "rtol=1x,atol=0", "rtol=,atol=0", "tol=1", "rtol=1;atol=1", "f32", "f32:",
                          "f32:1e-3", "bf16:0.01", "f64:0", "f32:rtol=1e-3,atol=1e-6", "int:1"}) {
    auto m = parse_compare_mode(bad);
    EXPECT_FALSE(m.ok()) << bad;
    if (!m.ok()) {
      EXPECT_EQ(m.error().code, "usage") << bad;
      std::string shown = *bad ? bad : "''";
      EXPECT_EQ(m.error().message.rfind("--compare " + shown + ":", 0), 0u) << m.error().message;
    }
  }
}

TEST(CompareMode, the_old_form_says_what_to_write_instead) {
  auto old = parse_compare_mode("f32:1e-3");
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("give rtol=1e-3,atol=A with both spelled out, or close"), std::string::npos)
      << old.error().message;
  auto typed = parse_compare_mode("f32:rtol=1e-3,atol=1e-6");
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.error().message.find("give rtol=1e-3,atol=1e-6"), std::string::npos) << typed.error().message;
  auto half = parse_compare_mode("rtol=1e-3");
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.error().message.find("atol is missing"), std::string::npos) << half.error().message;
  auto control = parse_compare_mode("rtol=1\x1b[2J,atol=0");
  ASSERT_FALSE(control.ok());
  EXPECT_EQ(control.error().message.find('\x1b'), std::string::npos) << "escapes reach the terminal";
}

TEST(ParamTypes, a_mangled_signature_gives_pointer_element_types) {
  auto saxpy = kernel_param_types("_Z5saxpyPfifPKf");  // saxpy(float*, int, float, float const*)
  ASSERT_TRUE(saxpy);
  ASSERT_EQ(saxpy->size(), 4u);
  EXPECT_EQ((*saxpy)[0].element, ElementType::f32);
  EXPECT_EQ((*saxpy)[0].text, "float*");
  EXPECT_EQ((*saxpy)[1].element, ElementType::bytes);  // int, not a pointer
  EXPECT_EQ((*saxpy)[2].element, ElementType::bytes);  // float, not a pointer
  EXPECT_EQ((*saxpy)[3].element, ElementType::f32);
  // llm.c's layernorm: (__nv_bfloat16*, float*, float*, __nv_bfloat16 const* x3, int, int)
  auto ln = kernel_param_types("_Z25layernorm_forward_kernel3P13__nv_bfloat16PfS1_PKS_S3_S3_ii");
  ASSERT_TRUE(ln);
  std::vector<ElementType> want = {ElementType::bf16, ElementType::f32,  ElementType::f32,   ElementType::bf16,
                                   ElementType::bf16, ElementType::bf16, ElementType::bytes, ElementType::bytes};
  ASSERT_EQ(ln->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ((*ln)[i].element, want[i]) << i;
  // A template instance (its return type is mangled too): adamw<bf16, bf16>.
  auto adamw = kernel_param_types("_Z13adamw_kernel3I13__nv_bfloat16S0_EvPT_PfPT0_S3_S3_mlllffffffffj");
  ASSERT_TRUE(adamw);
  ASSERT_EQ(adamw->size(), 18u);
  EXPECT_EQ((*adamw)[0].element, ElementType::bf16);
  EXPECT_EQ((*adamw)[1].element, ElementType::f32);
  EXPECT_EQ((*adamw)[5].element, ElementType::bytes);  // unsigned long
  // Integers, bool, void*, vectors, volatile, a pointer to a pointer.
  auto mixed = kernel_param_types("_Z3fooP6__halfPVKdP6float4PKbPvPiPjPKPfP7__half2");
  ASSERT_TRUE(mixed);
  want = {ElementType::f16,   ElementType::f64,   ElementType::f32,   ElementType::bytes, ElementType::bytes,
          ElementType::bytes, ElementType::bytes, ElementType::bytes, ElementType::f16};
  ASSERT_EQ(mixed->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ((*mixed)[i].element, want[i]) << i << " " << (*mixed)[i].text;
  // A template argument holding a parenthesis or comma does not split the list.
  auto wte = kernel_param_types("_Z24fused_classifier_kernel5ILb1ELb0EEvP13__nv_bfloat16PfS1_fPKiiiiiSt17integral_constantIbXT_EE");
  ASSERT_TRUE(wte);
  EXPECT_EQ(wte->size(), 10u);
  auto none = kernel_param_types("_Z3foov");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(ParamTypes, names_without_a_cpp_signature_have_no_types) {
  EXPECT_FALSE(kernel_param_types("triton_poi_fused_add_0"));
  EXPECT_FALSE(kernel_param_types("saxpy"));
  EXPECT_FALSE(kernel_param_types("_Zgarbage"));
  EXPECT_FALSE(kernel_param_types(""));
}

TEST(ParamTypes, allocations_take_the_type_their_parameters_agree_on) {
  formats::Capture c;
  c.kernel = "_Z1kPfPiS_P13__nv_bfloat16S_";  // k(float*, int*, float*, __nv_bfloat16*, float*)
  c.params = {{0, 8}, {8, 8}, {16, 8}, {24, 8}, {32, 8}};
  c.param_bytes.resize(40);
  c.allocations.resize(4);
  // allocation 0: params 0 and 2 (float*, float*); 1: param 1 (int*);
  // 2: params 3 and 4 (__nv_bfloat16*, float*); 3: none.
  c.pointers = {{0, 0, 0}, {1, 1, 0}, {2, 0, 16}, {3, 2, 0}, {4, 2, 8}};
  auto types = allocation_types(c);
  ASSERT_EQ(types.size(), 4u);
  EXPECT_EQ(types[0].element, ElementType::f32);
  EXPECT_EQ(types[0].why_bitwise, "");
  EXPECT_EQ(types[1].element, ElementType::bytes);
  EXPECT_EQ(types[1].why_bitwise, "parameter 1 is int*");
  EXPECT_EQ(types[2].element, ElementType::bytes);
  EXPECT_EQ(types[2].why_bitwise, "parameters 3 and 4 disagree: __nv_bfloat16*, float*");
  EXPECT_EQ(types[3].element, ElementType::bytes);
  // A signature whose parameter count is not the capture's is not trusted.
  c.params.pop_back();
  for (const auto& t : allocation_types(c)) {
    EXPECT_EQ(t.element, ElementType::bytes);
    EXPECT_NE(t.why_bitwise.find("5 parameter(s), the capture 4"), std::string::npos) << t.why_bitwise;
  }
  c.kernel = "triton_poi_fused_add_0";
  for (const auto& t : allocation_types(c)) EXPECT_EQ(t.element, ElementType::bytes);
}
