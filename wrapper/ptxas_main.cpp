// ciq-ptxas: see wrapper/ptxas_wrapper.h. Configured by the environment only.
#include "wrapper/ptxas_wrapper.h"

int main(int argc, char** argv) { ciq::wrapper::run_ciq_ptxas(argc, argv); }
