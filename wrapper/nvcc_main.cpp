// ciq-nvcc: see wrapper/nvcc_wrapper.h. Configured by the environment only.
#include "wrapper/nvcc_wrapper.h"

int main(int argc, char** argv) { ciq::wrapper::run_ciq_nvcc(argc, argv); }
