// A kernel whose author declared __launch_bounds__(1024, 2): ptxas must fit
// two 1024-thread blocks per SM, so 32 registers, and it spills. A
// .minnctapersm above 2 is out of range for 1024 threads; ptxas warns,
// ignores it and drops the bounds (no spills, but not what was declared).
// launch_bounds.ptx: nvcc -arch=sm_90a -ptx launch_bounds.cu
__global__ void __launch_bounds__(1024, 2) bounded(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[24];
  for (int j = 0; j < 24; ++j) acc[j] = a[(i + j * 37) % n];
  float s = 0;
  for (int j = 0; j < 24; ++j) s += acc[j] * acc[(j * 7) % 24];
  if (i < n) b[i] = s;
}
