// Tests of cache/tuned_on.h: what a record says it was tuned on, from the
// keys of today's tuner and of older records.
#include "cache/tuned_on.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::cache;

namespace {

Record parsed(const std::string& head) {
  auto r = parse_record("format = ciq-record/1\nkind = kernel\nkernel = _Z1kv\ntarget = sm_90a\nptxas = 13.0.88\n" + head +
                            "[controls]\nformat = ciq-controls/1\nspace = ptxas-13\n",
                        "test");
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : Record{};
}

} // namespace

TEST(TunedOn, reads_the_tuners_keys) {
  auto on = tuned_on(parsed("gpu = none\ndriver = none\nrun_dir = /runs/a\ncommand_line = /runs/a/command-line\n"
                            "gpu_nvml = NVIDIA H200\ngpu_model = NVIDIA H200\ngpu_memory_mib = 143771\n"
                            "gpu_cuda_cores = 16896\ndriver_nvml = 580.65\n"));
  EXPECT_EQ(on.compiler, "ptxas 13.0.88");
  EXPECT_EQ(on.gpu_model, "NVIDIA H200");
  EXPECT_EQ(on.driver, "580.65");
  EXPECT_EQ(on.command_line, "/runs/a/command-line");
  EXPECT_EQ(describe_gpu(on), "NVIDIA H200 (143771 MiB, 16896 CUDA cores), driver 580.65");
}

// Records shipped before gpu_model: nvidia-smi's `gpu` and the run directory.
TEST(TunedOn, old_records_stay_readable) {
  auto on = tuned_on(parsed("gpu = NVIDIA H100 80GB HBM3\ndriver = 570.86\nrun_dir = /runs/b\n"));
  EXPECT_EQ(on.gpu_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(on.driver, "570.86");
  EXPECT_EQ(on.command_line, "/runs/b/command-line");
  EXPECT_EQ(describe_gpu(on), "NVIDIA H100 80GB HBM3, driver 570.86");
}

TEST(TunedOn, no_gpu_and_hand_made_entries_record_none) {
  auto tuned = tuned_on(parsed("gpu = none\ndriver = none\n"));
  EXPECT_EQ(tuned.gpu_model, "");
  EXPECT_EQ(tuned.driver, "");
  EXPECT_EQ(describe_gpu(tuned), "");
  auto put = tuned_on(parsed("source = ciq-cache put\n"));
  EXPECT_EQ(put.gpu_model, "");
  EXPECT_EQ(put.command_line, "");
}

TEST(TunedOn, unit_records_name_nvcc) {
  auto r = parse_record("format = ciq-record/1\nkind = unit\nunit = a.cu\ntarget = compute_90a\nnvcc = 13.0.88\n"
                        "[controls]\nformat = ciq-controls/1\nspace = nvcc-13\n",
                        "test");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(tuned_on(*r).compiler, "nvcc 13.0.88");
}

TEST(TunedOn, gpu_models_compare_without_case_and_vendor) {
  EXPECT_TRUE(same_gpu_model("NVIDIA H100 80GB HBM3", "h100 80gb hbm3"));
  EXPECT_TRUE(same_gpu_model(" NVIDIA H200 ", "nvidia h200"));
  EXPECT_FALSE(same_gpu_model("NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"));
  EXPECT_FALSE(same_gpu_model("NVIDIA H100 80GB HBM3", "H100"));
}
