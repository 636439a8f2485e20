/* A stand-in for libcuda.so.1 (selected with CIQ_CUDA_LIBRARY), for
 * ciq-replay's tests on machines without a GPU. Device memory is host
 * memory; a "cubin" is a text file:
 *
 *   fake-cubin
 *   kernel NAME ADD MS
 *
 * and launching NAME treats its parameter buffer as (float* p, int n) and
 * does p[i] = 2 * p[i] + ADD for i < n, in place (so a replay that does not
 * restore its inputs before each launch gives other outputs); the events
 * around it measure n * MS milliseconds. Anything else as a module is
 * CUDA_ERROR_INVALID_IMAGE with an error log. FAKE_CUDA_ON_INIT and
 * FAKE_CUDA_COPIES: see cuInit and cuMemcpyDtoDAsync. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

struct fake_kernel {
  char name[128];
  float add;
  float ms;
};
struct fake_module {
  struct fake_kernel kernels[8];
  int count;
};
static float last_ms;

/* With FAKE_CUDA_ON_INIT=COMMAND, cuInit runs COMMAND (sh -c) first: a
 * test's way to change a capture between ciq-replay reading it and loading
 * its memory, as another user could. */
CUresult cuInit(unsigned flags) {
  const char* hook = getenv("FAKE_CUDA_ON_INIT");
  if (hook && system(hook) != 0) return 999;
  return 0;
}
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuGetErrorName(CUresult e, const char** s) {
  *s = e == 200 ? "CUDA_ERROR_INVALID_IMAGE" : e == 500 ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult e, const char** s) {
  *s = e == 200 ? "device kernel image is invalid" : e == 500 ? "named symbol not found" : "unknown error";
  return 0;
}
CUresult cuDeviceGetCount(int* n) { *n = 1; return 0; }
CUresult cuDeviceGet(int* d, int ordinal) { *d = ordinal; return 0; }
CUresult cuDeviceGetName(char* name, int len, int d) { snprintf(name, (size_t)len, "Fake GPU"); return 0; }
CUresult cuDeviceGetAttribute(int* v, int attribute, int d) {
  *v = attribute == 75 ? 9 : attribute == 38 ? (1 << 20) : 0;
  return 0;
}
static int context;
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { *c = &context; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
CUresult cuCtxSetCurrent(void* c) { return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t size) {
  void* m = calloc(1, size ? size : 1);
  if (!m) return 2;
  *p = (CUdeviceptr)m;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void*)p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* h, size_t n) { memcpy((void*)d, h, n); return 0; }
CUresult cuMemcpyDtoH_v2(void* h, CUdeviceptr d, size_t n) { memcpy(h, (void*)d, n); return 0; }
/* With FAKE_CUDA_COPIES=FILE, each device-to-device copy appends "copy N" (its bytes) to FILE. */
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void* stream) {
  const char* log = getenv("FAKE_CUDA_COPIES");
  if (log) {
    FILE* f = fopen(log, "a");
    if (f) {
      fprintf(f, "copy %zu\n", n);
      fclose(f);
    }
  }
  memcpy((void*)d, (void*)s, n);
  return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void* stream) { memset((void*)d, v, n); return 0; }

CUresult cuModuleLoadDataEx(void** module, const void* image, unsigned n, int* options, void** values) {
  const char* text = image;
  if (strncmp(text, "fake-cubin\n", 11) != 0) {
    for (unsigned i = 0; i < n; ++i)
      if (options[i] == 5) snprintf(values[i], 64, "fake ptxas: not a fake cubin");
    return 200;
  }
  struct fake_module* m = calloc(1, sizeof *m);
  const char* line = text + 11;
  while (m->count < 8 && sscanf(line, "kernel %127s %f %f", m->kernels[m->count].name, &m->kernels[m->count].add,
                                &m->kernels[m->count].ms) == 3) {
    ++m->count;
    line = strchr(line, '\n');
    if (!line) break;
    ++line;
  }
  *module = m;
  return 0;
}
CUresult cuModuleUnload(void* m) { free(m); return 0; }
CUresult cuModuleGetFunction(void** f, void* module, const char* name) {
  struct fake_module* m = module;
  for (int i = 0; i < m->count; ++i)
    if (strcmp(m->kernels[i].name, name) == 0) {
      *f = &m->kernels[i];
      return 0;
    }
  return 500;
}
CUresult cuFuncSetAttribute(void* f, int attribute, int value) { return 0; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void* stream, void** params, void** extra) {
  struct fake_kernel* k = f;
  if (!extra || extra[0] != (void*)1 || extra[2] != (void*)2 || *(size_t*)extra[3] < 12) return 1;
  const unsigned char* buffer = extra[1];
  float* p;
  int count;
  memcpy(&p, buffer, 8);
  memcpy(&count, buffer + 8, 4);
  for (int i = 0; i < count; ++i) p[i] = 2 * p[i] + k->add;
  last_ms = (float)count * k->ms;
  return 0;
}
static int stream, event;
CUresult cuStreamCreate(void** s, unsigned flags) { *s = &stream; return 0; }
CUresult cuStreamDestroy_v2(void* s) { return 0; }
CUresult cuStreamSynchronize(void* s) { return 0; }
CUresult cuEventCreate(void** e, unsigned flags) { *e = &event; return 0; }
CUresult cuEventDestroy_v2(void* e) { return 0; }
CUresult cuEventRecord(void* e, void* s) { return 0; }
CUresult cuEventSynchronize(void* e) { return 0; }
CUresult cuEventElapsedTime_v2(float* ms, void* start, void* stop) { *ms = last_ms; return 0; }
