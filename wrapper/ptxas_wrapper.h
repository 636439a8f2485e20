// ciq-ptxas: stands in for ptxas, either as nvcc's --ptxas-prefix
// (`ciq-ptxas ptxas <args>`) or directly (`TRITON_PTXAS_PATH=ciq-ptxas`).
// It looks up a tuned control set for the PTX being compiled (or takes the
// tuner's candidate from CIQ_CONTROLS), applies it, and runs the real ptxas.
// Whenever it has nothing to apply or anything goes wrong, it replaces
// itself with the real ptxas and the original arguments: same output bytes,
// same exit status, nothing on stdout.
#pragma once

namespace ciq::wrapper {

/// The whole of ciq-ptxas. Returns only through exit/exec.
[[noreturn]] void run_ciq_ptxas(int argc, char** argv);

} // namespace ciq::wrapper
