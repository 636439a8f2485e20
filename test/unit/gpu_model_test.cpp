// Tests of utils/gpu_model.h: the GPU model `ciq-cache stale` and
// `ciq-tuner retune --stale` compare with, one answer for both.
#include "utils/gpu_model.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace ciq;

TEST(GpuModel, the_named_one_then_the_environment_then_nvml) {
  ::setenv("CIQ_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  ::setenv("CIQ_GPU_MODEL", " NVIDIA H200 ", 1);
  std::string why;
  auto named = gpu_model_here(" NVIDIA H100 80GB HBM3 ", "--gpu", why);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(named->from, "--gpu");
  auto from_env = gpu_model_here("", "--gpu", why);
  ASSERT_TRUE(from_env);
  EXPECT_EQ(from_env->model, "NVIDIA H200");
  EXPECT_EQ(from_env->from, "CIQ_GPU_MODEL");
  ::unsetenv("CIQ_GPU_MODEL");
  EXPECT_FALSE(gpu_model_here("", "--gpu", why));
  EXPECT_EQ(why, "NVML (/nonexistent/libnvidia-ml.so.1) cannot be loaded: no NVIDIA driver here");
  EXPECT_FALSE(gpu_model_here("", "--gpu", why, "linked statically"));
  EXPECT_EQ(why, "linked statically");
  ::unsetenv("CIQ_NVML_LIBRARY");
}

// A library without NVML's calls is named with the ones it lacks.
TEST(GpuModel, a_library_that_is_not_nvml_is_named_with_what_it_lacks) {
  ::setenv("CIQ_NVML_LIBRARY", "libc.so.6", 1);
  std::string why;
  EXPECT_FALSE(nvml_gpu_model(why));
  EXPECT_EQ(why, "libc.so.6 lacks nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2");
  ::unsetenv("CIQ_NVML_LIBRARY");
}
