// ciq-cicc: the NVVM stage. ciq-nvcc runs nvcc with --cicc-prefix=ciq-cicc
// (hidden, like --ptxas-prefix), so every cicc run (one translation unit,
// one virtual target) comes here as `ciq-cicc <cicc> <args>`. It keys the
// unit by cicc's input (the preprocessed device source, line markers
// dropped), target, flags and the toolkit's version, looks up a unit record
// (local cache, then CIQ_PACKS), and runs cicc with that record's options,
// checked against the nvcc space of the running toolkit. In tuning mode
// (CIQ_CONTROLS) it applies the file's nvcc.* knobs, only to the units
// whose keys CIQ_UNITS lists when it is set. A miss, or any problem, runs
// cicc exactly as nvcc asked; if cicc fails with the options, it runs again
// without them (and a cache entry that broke it is quarantined).
#pragma once

namespace ciq::wrapper {

[[noreturn]] void run_ciq_cicc(int argc, char** argv);

} // namespace ciq::wrapper
