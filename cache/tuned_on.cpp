#include "cache/tuned_on.h"

#include "utils/files.h"
#include "utils/text.h"

#include <cctype>

namespace ciq::cache {

namespace {

// nvidia-smi's answer on a machine without a GPU (records of before NVML).
std::string known(std::string value) { return value == "none" ? "" : value; }

std::string canonical_model(std::string_view name) {
  std::string out;
  for (char c : trim(name)) out += char(std::tolower(static_cast<unsigned char>(c)));
  if (starts_with(out, "nvidia ")) out = std::string(trim(out.substr(7)));
  return out;
}

} // namespace

TunedOn tuned_on(const Record& r) {
  TunedOn on;
  on.compiler = r.kind == RecordKind::unit ? (r.nvcc.empty() ? "" : "nvcc " + r.nvcc) : (r.ptxas.empty() ? "" : "ptxas " + r.ptxas);
  on.gpu_model = r.provenance_value(tuned_on_key::gpu_model);
  if (on.gpu_model.empty()) on.gpu_model = r.provenance_value("gpu_nvml");
  if (on.gpu_model.empty()) on.gpu_model = known(r.provenance_value("gpu"));
  on.driver = r.provenance_value("driver_nvml");
  if (on.driver.empty()) on.driver = known(r.provenance_value("driver"));
  on.gpu_memory_mib = r.provenance_value(tuned_on_key::gpu_memory);
  on.gpu_cuda_cores = r.provenance_value(tuned_on_key::gpu_cores);
  on.command_line = r.provenance_value(tuned_on_key::command_line);
  on.run_id = r.provenance_value(tuned_on_key::run_id);
  // Records of before `command_line`: the run directory keeps it there.
  if (std::string run_dir = r.provenance_value("run_dir"); on.command_line.empty() && !run_dir.empty())
    on.command_line = join_path(run_dir, "command-line");
  return on;
}

std::string describe_gpu(const TunedOn& on) {
  if (on.gpu_model.empty()) return "";
  std::string details;
  if (!on.gpu_memory_mib.empty()) details = on.gpu_memory_mib + " MiB";
  if (!on.gpu_cuda_cores.empty()) details += (details.empty() ? "" : ", ") + on.gpu_cuda_cores + " CUDA cores";
  return on.gpu_model + (details.empty() ? "" : " (" + details + ")") + (on.driver.empty() ? "" : ", driver " + on.driver);
}

bool same_gpu_model(std::string_view a, std::string_view b) { return canonical_model(a) == canonical_model(b); }

} // namespace ciq::cache
