// The NVVM stage's pieces that need no nvcc: reading cicc's command line,
// keying a unit, putting options on cicc's command line, and the nvcc.*
// part of control sets and unit records.
#include "cache/cicc_command.h"
#include "spaces/control_set.h"
#include "cache/record.h"
#include "spaces/render.h"
#include "spaces/space.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::cache;
using namespace ciq::spaces;

namespace {

// What nvcc 13.0 gives cicc for `nvcc -arch=sm_90a -c k.cu` (nvcc --dryrun).
std::vector<std::string> cicc_args(const std::string& dir, const std::string& tmp) {
  return {"--c++17", "--static-host-stub", "--gnu_version=120200", "--orig_src_file_name", "k.cu",
          "--orig_src_path_name", dir + "/k.cu", "--allow_managed", "-arch", "compute_90a", "-m64",
          "--no-version-ident", "-ftz=0", "-prec_div=1", "-prec_sqrt=1", "-fmad=1", "--include_file_name",
          tmp + "-3_k.fatbin.c", "-tused", "--module_id_file_name", "/tmp/" + tmp + "-4_k.module_id",
          "--gen_c_file_name", "/tmp/" + tmp + "-6_k.cudafe1.c", "--stub_file_name", "/tmp/" + tmp + "-6_k.cudafe1.stub.c",
          "--gen_device_file_name", "/tmp/" + tmp + "-6_k.cudafe1.gpu", "/tmp/" + tmp + "-7_k.cpp1.ii", "-o",
          "/tmp/" + tmp + "-6_k.ptx"};
}

} // namespace

TEST(CiccCommand, reads_input_target_and_code_flags) {
  auto c = scan_cicc_args(cicc_args("/src", "tmpxft_1"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->input, "/tmp/tmpxft_1-7_k.cpp1.ii");
  EXPECT_EQ(c->output, "/tmp/tmpxft_1-6_k.ptx");
  EXPECT_EQ(c->target, "compute_90a");
  EXPECT_EQ(c->unit, "k.cu");
  EXPECT_EQ(c->source_path, "/src/k.cu");
  EXPECT_EQ(c->canonical_flags(), "--c++17 --static-host-stub --gnu_version=120200 --allow_managed -arch compute_90a -m64 "
                                  "--no-version-ident -ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 -tused");
}

TEST(CiccCommand, refuses_what_it_does_not_understand) {
  auto args = cicc_args("/src", "t");
  args.push_back("/tmp/second.ii"); // two inputs
  EXPECT_FALSE(scan_cicc_args(args).ok());
  EXPECT_FALSE(scan_cicc_args({"-arch"}).ok());                  // a value missing
  EXPECT_FALSE(scan_cicc_args({"--c++17", "/tmp/a.ii"}).ok());   // no target
  EXPECT_FALSE(scan_cicc_args({"-arch", "compute_90"}).ok());    // no input
}

TEST(CiccCommand, key_ignores_where_the_unit_lives_but_not_what_it_is) {
  auto a = scan_cicc_args(cicc_args("/home/a/src", "tmpxft_1"));
  auto b = scan_cicc_args(cicc_args("/build/b", "tmpxft_2"));
  ASSERT_TRUE(a.ok() && b.ok());
  std::string src_a = "# 1 \"/home/a/src/k.cu\"\n__global__ void k() {}\n# 3 \"/home/a/src/k.cu\" 2\n";
  std::string src_b = "# 1 \"/build/b/k.cu\"\n__global__ void k() {}\n# 3 \"/build/b/k.cu\" 2\n";
  EXPECT_EQ(normalise_cicc_input(src_a), "__global__ void k() {}\n");
  EXPECT_EQ(unit_key(normalise_cicc_input(src_a), *a, "V13.0.88"), unit_key(normalise_cicc_input(src_b), *b, "V13.0.88"));
  EXPECT_NE(unit_key(normalise_cicc_input(src_a), *a, "V13.0.88"), unit_key(normalise_cicc_input(src_a), *a, "V13.1.0"));
  EXPECT_NE(unit_key("__global__ void k() {}\n", *a, "V"), unit_key("__global__ void k() { }\n", *a, "V"));
  auto fast = cicc_args("/home/a/src", "tmpxft_1");
  fast[12] = "-ftz=1";
  auto c = scan_cicc_args(fast);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(unit_key("x", *a, "V"), unit_key("x", *c, "V"));
  // -cubin and -ptx builds have cicc write the module id file: same code.
  auto cubin = cicc_args("/home/a/src", "tmpxft_1");
  cubin.insert(cubin.begin() + 19, "--gen_module_id_file");
  auto d = scan_cicc_args(cubin);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(unit_key("x", *a, "V"), unit_key("x", *d, "V"));
}

TEST(CiccCommand, options_replace_their_own_kind_before_the_input) {
  std::vector<std::string> args{"-arch", "compute_90", "-ftz=0", "-O1", "-fmad=1", "in.ii", "-o", "out.ptx"};
  auto c = scan_cicc_args(args);
  ASSERT_TRUE(c.ok());
  auto out = apply_cicc_options(args, *c, {"-ftz=1", "-O0", "-disable-inlining"});
  EXPECT_EQ(out, (std::vector<std::string>{"-arch", "compute_90", "-fmad=1", "-ftz=1", "-O0", "-disable-inlining", "in.ii",
                                           "-o", "out.ptx"}));
  // A flag already there is not given twice; values of options are never touched.
  std::vector<std::string> twice{"-disable-inlining", "-arch", "compute_90", "in.ii", "-o", "-O0"};
  auto t = scan_cicc_args(twice);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(apply_cicc_options(twice, *t, {"-disable-inlining", "-O0"}),
            (std::vector<std::string>{"-arch", "compute_90", "-disable-inlining", "-O0", "in.ii", "-o", "-O0"}));
}

TEST(ControlSet, nvcc_stage_knobs_have_their_own_space) {
  auto set = parse_control_set("space = ptxas-13\nmaxrregcount = 64\nnvcc-space = nvcc-13\nnvcc.fmad = 0\n", "t");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->options.size(), 1u);
  EXPECT_EQ(set->nvcc.at("fmad"), "0");
  EXPECT_EQ(format_control_set(*set),
            "format = ciq-controls/1\nspace = ptxas-13\nmaxrregcount = 64\nnvcc-space = nvcc-13\nnvcc.fmad = 0\n");
  EXPECT_EQ(summarise_control_set(*set), "maxrregcount=64 nvcc.fmad=0");
  ControlSet ptxas = set->ptxas_stage(), nvvm = set->nvcc_stage();
  EXPECT_TRUE(ptxas.nvcc.empty());
  EXPECT_EQ(ptxas.options.at("maxrregcount"), "64");
  EXPECT_EQ(nvvm.space, "nvcc-13");
  EXPECT_EQ(nvvm.options, (std::map<std::string, std::string>{{"fmad", "0"}}));
  EXPECT_TRUE(set->for_kernel("k").nvcc.empty());
  ControlSet only;
  ASSERT_TRUE(add_assignment(only, "nvcc.ftz=1").ok());
  EXPECT_FALSE(only.empty());
  EXPECT_FALSE(add_assignment(only, "nvcc.=1").ok());
  EXPECT_FALSE(add_assignment(only, "nvcc.a.b=1").ok());
}

TEST(Record, a_unit_record_holds_one_stage) {
  std::string head = "format = ciq-record/1\nkind = unit\nunit = k.cu\ntarget = compute_90a\nnvcc = 13.0.88\n[controls]\n";
  auto r = parse_record(head + "space = nvcc-13\nfmad = 0\n", "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->unit, "k.cu");
  EXPECT_EQ(r->nvcc, "13.0.88");
  EXPECT_EQ(format_record(*r), head + "format = ciq-controls/1\nspace = nvcc-13\nfmad = 0\n");
  EXPECT_FALSE(parse_record(head + "space = nvcc-13\nnvcc.fmad = 0\n", "t").ok());  // nested stage
  EXPECT_FALSE(parse_record(head + "space = nvcc-13\nk:maxnreg = 64\n", "t").ok()); // a directive
  EXPECT_FALSE(parse_record(head + "space = nvcc-13\nacf = sha256:" + std::string(64, 'a') + "\n", "t").ok());
  EXPECT_FALSE(parse_record("format = ciq-record/1\nkind = module\n[controls]\nnvcc.fmad = 0\n", "t").ok());
}

TEST(Spaces, a_set_is_checked_against_its_own_stage) {
  auto space = spaces::parse_space("[space]\nname = nvcc-13\ntool = cicc\nversions = 13.0..13.99\n"
                                   "[option.fmad]\nrender = -fmad={}\nvalues = 0, 1\ndefault = 1\nsafety = numerics\n",
                                   "nvcc.space");
  ASSERT_TRUE(space.ok()) << space.error().message;
  ControlSet set;
  set.space = "nvcc-13";
  set.options["fmad"] = "0";
  EXPECT_TRUE(spaces::validate_controls(*space, set, {}).ok());
  EXPECT_EQ(spaces::render_controls(*space, set).options, std::vector<std::string>{"-fmad=0"});
  ControlSet nested = set;
  nested.nvcc["fmad"] = "0"; // the ptxas form of a candidate: refused as a one-stage set
  EXPECT_FALSE(spaces::validate_controls(*space, nested, {}).ok());
  ControlSet with_acf = set;
  with_acf.acf = Sha256{};
  EXPECT_FALSE(spaces::validate_controls(*space, with_acf, {}).ok());
  ControlSet ptxas_knob = set;
  ptxas_knob.options["maxrregcount"] = "32";
  EXPECT_FALSE(spaces::validate_controls(*space, ptxas_knob, {}).ok());
  spaces::Policy no_numerics;
  no_numerics.allow_numerics = false;
  EXPECT_FALSE(spaces::validate_controls(*space, set, no_numerics).ok());
}
