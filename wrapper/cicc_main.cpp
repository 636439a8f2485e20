// ciq-cicc: see wrapper/cicc_wrapper.h. ciq-nvcc puts it in front of cicc.
#include "wrapper/cicc_wrapper.h"

int main(int argc, char** argv) { ciq::wrapper::run_ciq_cicc(argc, argv); }
