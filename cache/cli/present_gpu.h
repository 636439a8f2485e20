// The GPU model `ciq-cache stale` compares entries with: the one named
// (--gpu), else $CIQ_GPU_MODEL (how a compile machine without a GPU says
// which GPU its builds are for), else the first GPU NVML sees here.
//
// Why not ciq-tuner's NVML reader (tuner/measure/gpu_monitor.h): ciq-cache
// links nothing of the tuner (the layering is one-way), and it needs the
// name alone. Like the tuner it loads libnvidia-ml at run time
// ($CIQ_NVML_LIBRARY, else libnvidia-ml.so.1), never links it: a machine
// without the driver simply has no GPU here.
#pragma once

#include <optional>
#include <string>

namespace ciq::cache::cli {

struct PresentGpu {
  std::string model;  // e.g. "NVIDIA H100 80GB HBM3"
  std::string from;   // "--gpu", "CIQ_GPU_MODEL" or "NVML"
};

/// The GPU model to compare with; std::nullopt when none is named and NVML
/// finds no GPU, with `why` saying what was tried.
std::optional<PresentGpu> present_gpu(const std::string& named, std::string& why);

} // namespace ciq::cache::cli
