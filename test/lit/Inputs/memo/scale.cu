// A program with a kernel that includes a header: what nvcc-memo.test builds.
#include "scale.h"
#include <cstdio>

__global__ void scale(float* out, const float* in, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * v + kOffset;
}

int main() {
  std::printf("scale %p\n", reinterpret_cast<void*>(&scale));
  return 0;
}
