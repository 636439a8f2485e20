// A stand-in for a user's program under libciq-inject, for tests on a
// machine without a GPU (where the CUDA driver, absent, would never call
// InitializeInjection): it calls the hook itself, as cuInit would, prints
// two lines, and ends the way it is told.
//
//   ciq-test-inject-driver LIB exit N             exit(N)
//   ciq-test-inject-driver LIB return N           return N from main
//   ciq-test-inject-driver LIB sigterm            raise SIGTERM (default action)
//   ciq-test-inject-driver LIB handled-sigterm N  its own SIGTERM handler, which calls exit(N)
//   ciq-test-inject-driver LIB _exit N            _exit(N): no atexit, no trace
//   ciq-test-inject-driver LIB serve              a resident program: echoes stdin's lines
//                                                 ("answer: LINE") until its end, then returns 0
//
// LIB "-" skips loading the library (the uninjected program).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <iostream>
#include <string>
#include <unistd.h>

static int handled_status = 0;

static void exit_on_signal(int) { std::exit(handled_status); }

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s LIB MODE [N]\n", argv[0]);
    return 2;
  }
  std::string library = argv[1], mode = argv[2];
  int status = argc > 3 ? std::atoi(argv[3]) : 0;
  if (mode == "handled-sigterm") {
    handled_status = status;
    std::signal(SIGTERM, exit_on_signal);  // before the hook, as a program's start-up would
  }
  std::printf("program: started\n");
  std::fflush(stdout);
  if (library != "-") {
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto* hook = handle ? reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection")) : nullptr;
    if (!hook) {
      std::fprintf(stderr, "driver: cannot load %s: %s\n", library.c_str(), dlerror());
      return 3;
    }
    hook();
  }
  std::printf("program: working in %s mode\n", mode.c_str());
  std::fflush(stdout);
  if (mode == "exit") std::exit(status);
  if (mode == "return") return status;
  if (mode == "_exit") _exit(status);
  if (mode == "serve") {
    for (std::string line; std::getline(std::cin, line);) std::cout << "answer: " << line << std::endl;
    return 0;
  }
  if (mode == "sigterm" || mode == "handled-sigterm") {
    std::raise(SIGTERM);
    std::printf("program: still here after SIGTERM\n");
    return 99;
  }
  std::fprintf(stderr, "driver: unknown mode %s\n", mode.c_str());
  return 2;
}
