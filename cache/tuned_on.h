// What a record says it was tuned and verified on: the compiler its key was
// made for, the driver, the GPU (model, memory, CUDA cores) and the run
// that produced it (its saved command line). ciq-tuner writes these as
// provenance keys when it ships an entry (tuner/run/ship.cpp);
// records shipped before they existed hold fewer (`gpu` from nvidia-smi,
// `gpu_nvml`, `driver`, `run_dir`), and tuned_on() reads whichever a record
// has. Packs carry records as text, so all of it travels with them.
#pragma once

#include "cache/record.h"

#include <string>
#include <string_view>

namespace ciq::cache {

/// The provenance keys the tuner writes for the machine an entry was
/// verified on (the older `gpu`, `gpu_nvml`, `driver`, `driver_nvml` and
/// `run_dir` are still written and read).
namespace tuned_on_key {
inline constexpr std::string_view gpu_model = "gpu_model";        // NVML's name, e.g. "NVIDIA H100 80GB HBM3"
inline constexpr std::string_view gpu_memory = "gpu_memory_mib";  // total memory, MiB
inline constexpr std::string_view gpu_cores = "gpu_cuda_cores";   // NVML's core count
inline constexpr std::string_view command_line = "command_line";  // <run dir>/command-line
inline constexpr std::string_view run_id = "run_id";              // <run dir>/run-id: which run, where a path may be reused
} // namespace tuned_on_key

struct TunedOn {
  std::string compiler;        // "ptxas 13.0.88" (kernel and module records) or "nvcc 13.0.88" (unit records)
  std::string driver;          // "" when unknown
  std::string gpu_model;       // "" when no GPU was seen: a compile-only objective, a Slurm run, an old record
  std::string gpu_memory_mib;  // "" when unknown
  std::string gpu_cuda_cores;  // "" when unknown
  std::string command_line;    // the run's saved command line (a file); "" for entries made by hand
  std::string run_id;          // the run's own id (<run dir>/run-id); "" for entries made by hand or before ids
};

/// What `record` says it was tuned on; fields it does not record are "".
TunedOn tuned_on(const Record& record);

/// "Fake H200 (143771 MiB, 16896 CUDA cores), driver 580.00" or "" when no
/// GPU is recorded.
std::string describe_gpu(const TunedOn& on);

/// Whether two GPU model names name one model: case, surrounding blanks
/// and a leading "NVIDIA " aside ("H100 80GB HBM3" is "NVIDIA H100 80GB
/// HBM3"; "H100" is neither, nor is "NVIDIA H100 PCIe").
bool same_gpu_model(std::string_view a, std::string_view b);

} // namespace ciq::cache
