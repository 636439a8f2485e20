/* A stand-in for libnvidia-ml.so.1 (selected with CIQ_NVML_LIBRARY), for
 * tests on machines without a GPU. It exports the NVML entry points
 * ciq-tuner reads (tuner/measure/gpu_monitor.h), with the documented C
 * signatures, and answers from a state file named by FAKE_NVML_STATE that
 * the test's benchmark writes: lines "energy_mj N", "sm_mhz N",
 * "reasons N" (clock-event bits), "energy_supported 0|1", "init_fails 1".
 * Missing lines: 0 mJ, 1980 MHz, no reasons, energy supported.
 * The GPU's name is $FAKE_NVML_NAME (default "Fake H200"), its memory
 * 143771 MiB and its CUDA cores 16896. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void* nvmlDevice_t;
static int fake_device;

static unsigned long long state(const char* key, unsigned long long fallback) {
  const char* path = getenv("FAKE_NVML_STATE");
  FILE* f = path ? fopen(path, "r") : NULL;
  char name[64];
  unsigned long long value, found = fallback;
  if (!f) return fallback;
  while (fscanf(f, "%63s %llu", name, &value) == 2)
    if (strcmp(name, key) == 0) found = value;
  fclose(f);
  return found;
}

int nvmlInit_v2(void) { return state("init_fails", 0) ? 9 /* driver not loaded */ : 0; }
const char* nvmlErrorString(int result) {
  return result == 3 ? "Not Supported" : result == 9 ? "Driver Not Loaded" : result == 2 ? "Invalid Argument" : "Unknown Error";
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (index > 1) return 2;
  *device = &fake_device;
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  if (!state("energy_supported", 1)) return 3;
  *energy = state("energy_mj", 0);
  return 0;
}
int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned* clock) {
  *clock = type == 1 ? (unsigned)state("sm_mhz", 1980) : 3201;
  return 0;
}
int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned* temperature) {
  *temperature = 45;
  return 0;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* milliwatts) {
  *milliwatts = 350000;
  return 0;
}
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* milliwatts) {
  *milliwatts = 700000;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  *reasons = state("reasons", 0);
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  const char* given = getenv("FAKE_NVML_NAME");
  snprintf(name, length, "%s", given ? given : "Fake H200");
  return 0;
}
int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  snprintf(version, length, "580.00.fake");
  return 0;
}
int nvmlDeviceGetEccMode(nvmlDevice_t device, int* current, int* pending) {
  *current = *pending = 1;
  return 0;
}
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  memory->total = 143771ull << 20;
  memory->used = 1ull << 20;
  memory->free = memory->total - memory->used;
  return 0;
}
int nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned* cores) {
  *cores = 16896;
  return 0;
}
int nvmlShutdown(void) { return 0; }
