// Whether a program started here can use an NVIDIA GPU: asked before a
// profile, a campaign or a kernel-time run builds or runs anything, so that
// a machine without one is told first, with what it can do instead, not
// after a rebuild and a program run that timed nothing.
#pragma once

#include <string>

namespace ciq::tuner {

/// Why no program here can use an NVIDIA GPU: the CUDA driver
/// ($CIQ_CUDA_LIBRARY, default libcuda.so.1, as ciq-replay loads it) cannot
/// be loaded or lacks cuInit/cuDeviceGetCount, cuInit fails, or it counts
/// no device. "" when one can. Asked once per process (the driver stays
/// loaded, as in ciq-replay): cuInit makes no context, so the GPU is not
/// held and the programs started later are not affected.
std::string no_gpu_reason();

/// `what` (e.g. "profile times the program's kernels") and `reason` as one
/// error message that says what to do on a machine without a GPU: tune on
/// what ptxas reports (--objective ptxas:spill-stores or ptxas:registers),
/// or run there on a machine with an NVIDIA GPU and its driver.
std::string no_gpu_message(const std::string& what, const std::string& reason);

/// Whether an NVIDIA kernel driver is loaded on this machine
/// (/proc/driver/nvidia/version exists).
bool nvidia_driver_loaded();

} // namespace ciq::tuner
