// ciq-nvcc: runs the real nvcc with every argument untouched, plus
// --ptxas-prefix pointing at ciq-ptxas, so that each ptxas step nvcc runs
// goes through ciq. Works as CUDACXX and as a compiler launcher
// (CMAKE_CUDA_COMPILER_LAUNCHER=ciq-nvcc: the first argument is the nvcc).
#pragma once

#include <string>
#include <vector>

namespace ciq::wrapper {

/// Quotes `word` for a POSIX shell ('...' with embedded quotes escaped).
std::string shell_quote(const std::string& word);

/// True for a device link with -dlto: nvlink compiles in-process, no ptxas
/// process runs, so controls cannot reach it.
bool is_lto_device_link(const std::vector<std::string>& args);

[[noreturn]] void run_ciq_nvcc(int argc, char** argv);

} // namespace ciq::wrapper
