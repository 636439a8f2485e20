#include "cache/ptxas_command.h"

#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::cache;

static PtxasCommand scan(std::vector<std::string> args) {
  auto r = scan_ptxas_args(args);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : PtxasCommand{};
}

TEST(PtxasCommand, nvcc_compile_line) {
  auto c = scan({"-arch=sm_90a", "-m64", "-v", "x.ptx", "-o", "x.cubin"});
  EXPECT_EQ(c.target, "sm_90a");
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_EQ(c.inputs[0].value, "x.ptx");
  EXPECT_EQ(c.inputs[0].arg_index, 3u);
  EXPECT_EQ(c.output, "x.cubin");
  EXPECT_TRUE(c.verbose);
  EXPECT_EQ(c.canonical_flags(), ""); // -m64 is the default; -v is not codegen
}

TEST(PtxasCommand, triton_line) {
  auto c = scan({"-lineinfo", "--fmad=false", "-v", "--opt-level", "0", "--gpu-name=sm_90a", "k.ptx", "-o", "k.ptx.o"});
  EXPECT_EQ(c.target, "sm_90a");
  EXPECT_EQ(c.canonical_flags(), "fmad=false opt-level=0");
}

TEST(PtxasCommand, spellings_of_one_flag_are_one_key) {
  std::string a = scan({"-O2", "-arch", "sm_90a", "x.ptx"}).canonical_flags();
  EXPECT_EQ(a, scan({"--opt-level=2", "-arch=sm_90a", "x.ptx"}).canonical_flags());
  EXPECT_EQ(a, scan({"--opt-level", "2", "--gpu-name", "sm_90a", "x.ptx"}).canonical_flags());
  EXPECT_EQ(scan({"-O3", "x.ptx"}).canonical_flags(), "");
  EXPECT_EQ(scan({"-maxrregcount=64", "x.ptx"}).canonical_flags(), "maxrregcount=64");
}

TEST(PtxasCommand, no_output_info_and_several_inputs) {
  EXPECT_FALSE(scan({"-arch=compute_90", "x.ptx"}).output);
  EXPECT_TRUE(scan({"--version"}).info_only);
  EXPECT_TRUE(scan({"-h"}).info_only);
  EXPECT_EQ(scan({"a.ptx", "b.ptx", "-arch=sm_90"}).inputs.size(), 2u);
}

TEST(PtxasCommand, input_as_string_and_user_controls) {
  auto c = scan({"--input-as-string", ".version 9.0", "-arch=sm_90a", "--apply-controls", "f.acf"});
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_TRUE(c.inputs[0].is_string);
  EXPECT_EQ(c.inputs[0].arg_index, 1u);
  EXPECT_TRUE(c.user_controls);
  EXPECT_EQ(c.codegen_flags.at("apply-controls"), "user");
}

TEST(PtxasCommand, unknown_options_are_kept_verbatim) {
  auto c = scan({"--future-flag", "x.ptx"});
  EXPECT_EQ(c.canonical_flags(), "--future-flag");
}

TEST(PtxasCommand, options_file_is_read) {
  auto dir = ScratchDir::create("ciq-test");
  ASSERT_TRUE(dir.ok());
  std::string f = join_path(dir->path(), "opts");
  ASSERT_TRUE(write_file_atomic(f, "-arch=sm_90a '--fmad=false'\n").ok());
  auto c = scan({"--options-file", f, "x.ptx"});
  EXPECT_EQ(c.target, "sm_90a");
  EXPECT_EQ(c.canonical_flags(), "fmad=false");
  EXPECT_FALSE(scan_ptxas_args({"-optf", join_path(dir->path(), "missing")}).ok());
}

TEST(PtxasCommand, missing_value_fails) {
  EXPECT_FALSE(scan_ptxas_args({"x.ptx", "-o"}).ok());
  EXPECT_FALSE(scan_ptxas_args({"-arch"}).ok());
}

TEST(PtxasCommand, codegen_flags_string_for_put) {
  auto f = parse_codegen_flags("-O2 --fmad=false -lineinfo");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->size(), 2u);
  EXPECT_FALSE(parse_codegen_flags("x.ptx").ok());
  EXPECT_FALSE(parse_codegen_flags("-arch=sm_90").ok());
}
