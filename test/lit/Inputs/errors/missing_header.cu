#include "nosuch.h"
__global__ void k(float* p) { p[0] = 1; }
