// A stand-in for a user's CUDA program under libciq-inject with CIQ_CAPTURE,
// for tests without a GPU: it loads the stand-in driver (fake_cuda.cpp) as
// the real driver is in a process before cuInit, calls InitializeInjection
// as cuInit would, then plays a script of launches, handing each to CUPTI's
// subscriber through the stand-in CUPTI (fake_cupti.cpp) at API enter and
// exit, with the kernel's writes in between (seen, as on a GPU, only once
// the context is synchronised). At the end it synchronises, prints a
// checksum of all its memory and exits with the script's status: the same
// output and status with and without the library is the test that capture
// left the program alone.
//
//   ciq-test-capture-driver LIB|- FAKE_CUDA FAKE_CUPTI SCRIPT
//
// SCRIPT, one command a line (# starts a comment):
//   alloc NAME SIZE [device|managed|host] [SEED]
//   capturing STREAM            stream number STREAM is being recorded into a graph
//   launch KEY=VALUE...         kernel=MANGLED (required), api=cuLaunchKernel
//                               (or cuLaunchKernel_ptsz, cuLaunchKernelEx,
//                               cuLaunchKernelEx_ptsz, cuLaunchCooperativeKernel,
//                               cuGraphLaunch), grid=X,Y,Z block=X,Y,Z smem=N
//                               stream=N repeat=N cooperative=1 (an Ex attribute)
//                               params=extra (through `extra`, not kernelParams)
//                               fail=1 (the launch returns an error)
//                               handle=kernel (a CUkernel, as the runtime passes:
//                               only cuKernelGetParamInfo answers for it)
//                               args=ARG,ARG,...  ptr:NAME+OFFSET  u32:V  u64:V
//                                     struct:NAME (16 bytes: NAME's address, 0)
//                               writes=NAME+OFFSET:COUNT  (COUNT bytes of 0xee)
//                               module=NAME (the function is in module NAME:
//                               cuFuncGetModule answers for it)
//   module NAME CUBIN           cuModuleLoadData of the file CUBIN: its enter,
//                               CUPTI's module-loaded callback with the image,
//                               and its exit with the new module NAME
//   exit N                      the status to end with (default 0)
//   sigterm                     raise SIGTERM (default action: the program dies of it)
#include <cuda.h>
#include <cupti.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Fake {
  CUdeviceptr (*alloc)(std::uint64_t, int, unsigned) = nullptr;
  void (*queue_write)(CUdeviceptr, const void*, std::size_t) = nullptr;
  CUfunction (*function)(std::size_t, const std::size_t*, const std::size_t*) = nullptr;
  CUfunction (*kernel_handle)(std::size_t, const std::size_t*, const std::size_t*) = nullptr;
  void (*begin_capture)(CUstream) = nullptr;
  CUmodule (*module)() = nullptr;
  void (*set_module)(CUfunction, CUmodule) = nullptr;
  std::size_t (*memory)(std::size_t, const unsigned char**) = nullptr;
  CUresult (*synchronise)() = nullptr;
  int (*cupti_call)(CUpti_CallbackDomain, CUpti_CallbackId, const void*) = nullptr;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "capture-driver: %s\n", message.c_str());
  std::exit(2);
}

template <typename F> void resolve(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (!out) die(std::string("no ") + name);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  return parts;
}

/// One argument's bytes and its natural alignment.
struct Arg {
  std::vector<unsigned char> bytes;
  std::size_t align;
};

struct Program {
  Fake fake;
  std::map<std::string, CUdeviceptr> allocations;
  std::map<std::string, CUmodule> modules;
  std::uint64_t correlation = 0;
  int launches = 0;

  CUdeviceptr address(const std::string& text) {
    auto plus = text.find('+');
    auto it = allocations.find(text.substr(0, plus));
    if (it == allocations.end()) die("no allocation " + text);
    return it->second + (plus == std::string::npos ? 0 : std::stoull(text.substr(plus + 1)));
  }

  Arg arg(const std::string& text) {
    auto colon = text.find(':');
    std::string type = text.substr(0, colon), value = text.substr(colon + 1);
    Arg a;
    auto put = [&](std::uint64_t v, std::size_t size) {
      a.bytes.resize(a.bytes.size() + size);
      std::memcpy(a.bytes.data() + a.bytes.size() - size, &v, size);
    };
    if (type == "ptr") put(address(value), 8), a.align = 8;
    else if (type == "u64") put(std::stoull(value), 8), a.align = 8;
    else if (type == "u32") put(std::stoull(value), 4), a.align = 4;
    else if (type == "struct") put(address(value), 8), put(0, 8), a.align = 8;
    else die("unknown argument " + text);
    return a;
  }

  void launch(const std::map<std::string, std::string>& keys) {
    auto get = [&](const char* key, const char* fallback) {
      auto it = keys.find(key);
      return it == keys.end() ? std::string(fallback) : it->second;
    };
    std::string kernel = get("kernel", ""), api = get("api", "cuLaunchKernel");
    auto dims = [&](const char* key) {
      auto parts = split(get(key, "1,1,1"), ',');
      if (parts.size() != 3) die(std::string("bad ") + key);
      return std::vector<unsigned>{unsigned(std::stoul(parts[0])), unsigned(std::stoul(parts[1])), unsigned(std::stoul(parts[2]))};
    };
    auto grid = dims("grid"), block = dims("block");
    unsigned smem = unsigned(std::stoul(get("smem", "0")));
    auto stream = reinterpret_cast<CUstream>(std::uintptr_t(std::stoull(get("stream", "0"))));

    std::vector<Arg> args;
    for (const auto& text : split(get("args", ""), ',')) if (!text.empty()) args.push_back(arg(text));
    std::vector<std::size_t> offsets, sizes;
    std::vector<unsigned char> buffer;
    std::size_t end = 0;
    for (const Arg& a : args) {
      end = (end + a.align - 1) / a.align * a.align;
      offsets.push_back(end);
      sizes.push_back(a.bytes.size());
      end += a.bytes.size();
    }
    buffer.resize(end);
    for (std::size_t i = 0; i < args.size(); ++i) std::memcpy(buffer.data() + offsets[i], args[i].bytes.data(), sizes[i]);
    CUfunction function = get("handle", "function") == "kernel" ? fake.kernel_handle(args.size(), offsets.data(), sizes.data())
                                                                 : fake.function(args.size(), offsets.data(), sizes.data());
    if (std::string in = get("module", ""); !in.empty()) {
      auto it = modules.find(in);
      if (it == modules.end()) die("no module " + in);
      fake.set_module(function, it->second);
    }
    std::vector<void*> kernel_params;
    for (Arg& a : args) kernel_params.push_back(a.bytes.data());
    std::size_t buffer_size = buffer.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &buffer_size,
                     CU_LAUNCH_PARAM_END};
    bool through_extra = get("params", "pointers") == "extra";
    void** params = through_extra ? nullptr : kernel_params.data();
    void** extra_given = through_extra ? extra : nullptr;

    cuLaunchKernel_params classic{function, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, params, extra_given};
    CUlaunchAttribute attribute = {};
    attribute.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attribute.value.cooperative = 1;
    CUlaunchConfig config{grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, &attribute,
                          get("cooperative", "0") == "1" ? 1u : 0u};
    cuLaunchKernelEx_params extended{&config, function, params, extra_given};
    cuLaunchCooperativeKernel_params cooperative{function, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream, params};
    cuGraphLaunch_params graph{nullptr, stream};
    const void* function_params = &classic;
    CUpti_CallbackId id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    if (api == "cuLaunchKernel_ptsz") id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz;
    else if (api == "cuLaunchKernelEx") id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, function_params = &extended;
    else if (api == "cuLaunchKernelEx_ptsz") id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, function_params = &extended;
    else if (api == "cuLaunchCooperativeKernel") id = CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, function_params = &cooperative;
    else if (api == "cuGraphLaunch") id = CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, function_params = &graph;
    else if (api != "cuLaunchKernel") die("unknown api " + api);

    int repeat = std::stoi(get("repeat", "1"));
    std::string writes = get("writes", "");
    CUresult returned = get("fail", "0") == "1" ? CUDA_ERROR_LAUNCH_FAILED : CUDA_SUCCESS;
    for (int n = 0; n < repeat; ++n) {
      std::uint64_t correlation_data = 0;
      CUpti_CallbackData data = {};
      data.functionName = api.c_str();
      data.functionParams = function_params;
      data.symbolName = api == "cuGraphLaunch" ? nullptr : kernel.c_str();
      data.correlationData = &correlation_data;
      data.correlationId = std::uint32_t(++correlation);
      data.callbackSite = CUPTI_API_ENTER;
      fake.cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, id, &data);
      if (returned == CUDA_SUCCESS && !writes.empty()) {
        auto colon = writes.find(':');
        std::vector<unsigned char> bytes(std::stoull(writes.substr(colon + 1)), 0xee);
        fake.queue_write(address(writes.substr(0, colon)), bytes.data(), bytes.size());
      }
      data.callbackSite = CUPTI_API_EXIT;
      data.functionReturnValue = &returned;
      fake.cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, id, &data);
      ++launches;
    }
  }

  void load_module(const std::string& name, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) die("cannot read " + path);
    std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CUmodule module = nullptr;
    cuModuleLoadData_params params{&module, image.data()};
    std::uint64_t correlation_data = 0;
    CUpti_CallbackData data = {};
    data.functionName = "cuModuleLoadData";
    data.functionParams = &params;
    data.correlationData = &correlation_data;
    data.correlationId = std::uint32_t(++correlation);
    data.callbackSite = CUPTI_API_ENTER;
    fake.cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData, &data);
    CUpti_ModuleResourceData loaded = {};
    loaded.moduleId = std::uint32_t(modules.size() + 1);
    loaded.cubinSize = image.size();
    loaded.pCubin = image.data();
    CUpti_ResourceData resource = {};
    resource.resourceDescriptor = &loaded;
    fake.cupti_call(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED, &resource);
    module = fake.module();
    modules[name] = module;
    CUresult returned = CUDA_SUCCESS;
    data.callbackSite = CUPTI_API_EXIT;
    data.functionReturnValue = &returned;
    fake.cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData, &data);
  }
};

} // namespace

int main(int argc, char** argv) {
  if (argc != 5) die("usage: ciq-test-capture-driver LIB|- FAKE_CUDA FAKE_CUPTI SCRIPT");
  std::string library = argv[1];
  Program program;
  // The driver is in the process before cuInit calls the hook.
  void* cuda = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
  if (!cuda) die(std::string("cannot load the stand-in driver: ") + dlerror());
  Fake& f = program.fake;
  resolve(cuda, "fake_cuda_alloc", f.alloc);
  resolve(cuda, "fake_cuda_queue_write", f.queue_write);
  resolve(cuda, "fake_cuda_function", f.function);
  resolve(cuda, "fake_cuda_kernel_handle", f.kernel_handle);
  resolve(cuda, "fake_cuda_begin_capture", f.begin_capture);
  resolve(cuda, "fake_cuda_module", f.module);
  resolve(cuda, "fake_cuda_set_module", f.set_module);
  resolve(cuda, "fake_cuda_memory", f.memory);
  resolve(cuda, "cuCtxSynchronize", f.synchronise);
  std::printf("program: started\n");
  std::fflush(stdout);
  if (library != "-") {
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto* hook = handle ? reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection")) : nullptr;
    if (!hook) die("cannot load " + library + ": " + dlerror());
    hook();
  }
  // The same copy of CUPTI as the library's when it loaded this path.
  void* cupti = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
  if (!cupti) die(std::string("cannot load the stand-in CUPTI: ") + dlerror());
  resolve(cupti, "fake_cupti_call", f.cupti_call);

  std::ifstream script(argv[4]);
  if (!script) die(std::string("cannot read ") + argv[4]);
  int status = 0;
  for (std::string line; std::getline(script, line);) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string command;
    if (!(words >> command)) continue;
    if (command == "alloc") {
      std::string name, kind = "device";
      std::uint64_t size = 0;
      unsigned seed = unsigned(program.allocations.size() + 1);
      words >> name >> size >> kind >> seed;
      int k = kind == "device" ? 0 : kind == "managed" ? 1 : kind == "host" ? 2 : -1;
      if (k < 0) die("unknown memory kind " + kind);
      program.allocations[name] = f.alloc(size, k, seed);
    } else if (command == "capturing") {
      std::uint64_t stream = 0;
      words >> stream;
      f.begin_capture(reinterpret_cast<CUstream>(std::uintptr_t(stream)));
    } else if (command == "launch") {
      std::map<std::string, std::string> keys;
      for (std::string word; words >> word;) {
        auto eq = word.find('=');
        if (eq == std::string::npos) die("not KEY=VALUE: " + word);
        keys[word.substr(0, eq)] = word.substr(eq + 1);
      }
      program.launch(keys);
    } else if (command == "module") {
      std::string name, path;
      words >> name >> path;
      program.load_module(name, path);
    } else if (command == "sigterm") {
      std::fflush(stdout);
      std::raise(SIGTERM);
    } else if (command == "exit") {
      words >> status;
    } else {
      die("unknown command " + command);
    }
  }
  // Stream capture ends with the program (a real one would end its graph);
  // the writes of the last kernels become visible.
  if (f.synchronise() != CUDA_SUCCESS) std::printf("program: synchronise refused (a stream is being captured)\n");
  std::uint64_t checksum = 1469598103934665603ULL;  // FNV-1a over every allocation
  for (std::size_t i = 0;; ++i) {
    const unsigned char* bytes = nullptr;
    std::size_t size = f.memory(i, &bytes);
    if (!size) break;
    for (std::size_t j = 0; j < size; ++j) checksum = (checksum ^ bytes[j]) * 1099511628211ULL;
  }
  std::printf("program: %d launches, memory checksum %016llx\n", program.launches, (unsigned long long)checksum);
  return status;
}
