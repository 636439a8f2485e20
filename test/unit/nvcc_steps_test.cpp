#include "wrapper/nvcc_steps.h"
#include "wrapper/step_memo.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace ciq::wrapper;

TEST(NvccSteps, splits_steps_and_applies_environment) {
  const char* listing = "#$ _NVVM_BRANCH_=nvvm\n"
                        "#$ CIQ_TEST_CICC_PATH=/opt/cuda/nvvm/bin\n"
                        "#$ INCLUDES=\"-I/a\" \"-I/b\"\n"
                        "#$ \"$CIQ_TEST_CICC_PATH/cicc\" --orig_src_file_name \"/src/my file.cu\" -o "
                        "\"/tmp/x/tmpxft_00001a0a_00000000-7_k.ptx\"\n"
                        "#$ '/bin/ciq-ptxas' ptxas -arch=sm_90a \"/tmp/x/tmpxft_00001a0a_00000000-7_k.ptx\"\n";
  auto plan = parse_dryrun(listing);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[0][0], "/opt/cuda/nvvm/bin/cicc");
  EXPECT_EQ(plan->steps[0][2], "/src/my file.cu");
  EXPECT_EQ(plan->steps[0][4], "/tmp/x/tmpxft_00000000_00000000-7_k.ptx"); // the pid is gone
  EXPECT_EQ(plan->steps[1][0], "/bin/ciq-ptxas");
  EXPECT_EQ(plan->steps[1][1], "ptxas");
  // Single-word assignments are applied and kept; multi-word ones are not.
  ASSERT_EQ(plan->environment.size(), 2u);
  EXPECT_EQ(plan->environment[1].second, "/opt/cuda/nvvm/bin");
  EXPECT_STREQ(std::getenv("CIQ_TEST_CICC_PATH"), "/opt/cuda/nvvm/bin");
}

TEST(NvccSteps, a_unit_reaches_machine_code_when_ptxas_compiles_its_ptx_to_a_cubin) {
  // nvcc 13's -arch=sm_90a plan (abridged): compute_90's PTX is checked by
  // ptxas (no output) and embedded as PTX; compute_90a's becomes the cubin.
  const char* listing =
      "#$ \"/cuda/nvvm/bin/cicc\" --c++17 -arch compute_90 -m64 \"k.cpp1.ii\" -o \"/tmp/tmpxft_00007dd9_00000000-7_k.compute_90.ptx\"\n"
      "#$ ptxas -arch=compute_90 -m64 \"/tmp/tmpxft_00007dd9_00000000-7_k.compute_90.ptx\"\n"
      "#$ \"/cuda/nvvm/bin/cicc\" --c++17 -arch compute_90a -m64 \"k.cpp1.ii\" -o \"/tmp/tmpxft_00007dd9_00000000-6_k.compute_90a.ptx\"\n"
      "#$ ptxas -arch=sm_90a -m64 \"/tmp/tmpxft_00007dd9_00000000-6_k.compute_90a.ptx\" -o "
      "\"/tmp/tmpxft_00007dd9_00000000-10_k.compute_90a.sm_90a.cubin\"\n"
      "#$ fatbinary -64 \"--image3=kind=ptx,sm=90,file=/tmp/tmpxft_00007dd9_00000000-7_k.compute_90.ptx\"\n";
  auto plan = parse_dryrun(listing);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(reaches_machine_code(*plan, "compute_90a"), std::optional<bool>(true));
  EXPECT_EQ(reaches_machine_code(*plan, "compute_90"), std::optional<bool>(false));
  EXPECT_EQ(reaches_machine_code(*plan, "compute_80"), std::nullopt);  // no such step: cannot tell
  // Two -gencode pairs, one of them code=compute_90 (PTX only), the cicc
  // steps behind a prefix as ciq-nvcc runs them.
  auto two = parse_dryrun(
      "#$ /bin/ciq-cicc /cuda/nvvm/bin/cicc -arch compute_80 k.ii -o /tmp/tmpxft_00000001_00000000-7_k.compute_80.ptx\n"
      "#$ /bin/ciq-ptxas ptxas -arch=sm_80 -m64 /tmp/tmpxft_00000001_00000000-7_k.compute_80.ptx -o /tmp/k.cubin\n"
      "#$ /bin/ciq-cicc /cuda/nvvm/bin/cicc -arch compute_90 k.ii -o /tmp/tmpxft_00000001_00000000-6_k.compute_90.ptx\n"
      "#$ /bin/ciq-ptxas ptxas -arch=compute_90 -m64 /tmp/tmpxft_00000001_00000000-6_k.compute_90.ptx\n");
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(reaches_machine_code(*two, "compute_80"), std::optional<bool>(true));
  EXPECT_EQ(reaches_machine_code(*two, "compute_90"), std::optional<bool>(false));
  // -MD adds a line no shell-free split takes, and nvcc may warn: a reader
  // of some steps skips them; an LTO unit's IR goes to the link.
  const char* with_md = "nvcc warning : incompatible redefinition for option 'optimize', the last value of this option was used\n"
                        "#$ /cuda/nvvm/bin/cicc -arch compute_90 k.ii -o /tmp/tmpxft_00000002_00000000-6_k.compute_90.ptx\n"
                        "#$ ptxas -arch=compute_90 -m64 /tmp/tmpxft_00000002_00000000-6_k.compute_90.ptx\n"
                        "#$ -- Filter Dependencies -- > a.d\n"
                        "#$ /cuda/nvvm/bin/cicc -arch compute_90a -lto k.ii -o /tmp/tmpxft_00000002_00000000-5_k.compute_90a.ltoir\n";
  EXPECT_FALSE(parse_dryrun(with_md).ok());
  auto lenient = parse_dryrun(with_md, /*skip_unsplittable=*/true);
  ASSERT_TRUE(lenient.ok()) << lenient.error().message;
  EXPECT_EQ(reaches_machine_code(*lenient, "compute_90"), std::optional<bool>(false));
  EXPECT_EQ(reaches_machine_code(*lenient, "compute_90a"), std::optional<bool>(true));
}

TEST(NvccSteps, threads_output_files_go_straight_through) {
  // nvcc -t0 (llm.c's Makefile) sends each step's output to temporaries.
  auto plan = parse_dryrun("#$ ptxas -arch=sm_90 \"/tmp/tmpxft_00004611_00000000-6_k.ptx\" -o k.cubin  > "
                           "/tmp/tmpxft_00004611_00000000-14_317335f0_stdout 2>/tmp/tmpxft_00004611_00000000-14_317335f0_stderr\n");
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].back(), "k.cubin");
  EXPECT_EQ(plan->steps[0].size(), 5u);
  // Any other redirection is still a shell's.
  EXPECT_FALSE(parse_dryrun("#$ gcc -c a.c > /tmp/tmpxft_00004611_00000000-14_1_stdout\n").ok());
  EXPECT_FALSE(parse_dryrun("#$ gcc -c a.c > /home/me/log_stdout 2>/home/me/log_stderr\n").ok());
}

TEST(NvccSteps, refuses_what_needs_a_shell) {
  EXPECT_FALSE(parse_dryrun("#$ gcc -c a.c > log\n").ok());
  EXPECT_FALSE(parse_dryrun("#$ gcc $(whoami)\n").ok());
  EXPECT_FALSE(parse_dryrun("#$ gcc $CIQ_TEST_UNSET_VARIABLE\n").ok());
  EXPECT_FALSE(parse_dryrun("nvcc warning : something\n#$ gcc -c a.c\n").ok());
  EXPECT_FALSE(parse_dryrun("#$ PATH=/bin\n").ok()); // no step at all
}

TEST(StepMemo, options_it_cannot_reproduce_run_nvcc_itself) {
  EXPECT_TRUE(memo_unsuitable({"-c", "--keep", "a.cu"}));
  EXPECT_TRUE(memo_unsuitable({"--keep-dir=/tmp/k", "a.cu"}));
  EXPECT_TRUE(memo_unsuitable({"-v", "a.cu"}));
  EXPECT_TRUE(memo_unsuitable({"--time", "t.csv", "a.cu"}));
  EXPECT_FALSE(memo_unsuitable({"-O3", "-arch=sm_90a", "a.cu", "-o", "a"}));
}
