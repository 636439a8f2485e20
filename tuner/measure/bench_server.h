// Resident benchmarks (`--bench-server CMD`): a benchmark that stays
// running, one per GPU, started on that GPU's first request. The build is
// still a process per step (the local executor's); --bench and --check
// become requests to the server of the GPU the step holds: a line
// `ciq-request: ID`, their words (placeholders filled in), one per line,
// then an empty line; the server answers with the output and a line
// `ciq-status: ID N` (bench_protocol.h). A server that dies (noticed by its
// own exit, even while a child holds its stdout), garbles an answer (a
// wrong ID, output after the status line) or does not answer in time
// (--timeout; a fresh server's first answer gets --server-start seconds
// more, for its start-up) is started again for the next request.
//
// kernel-time: a server is started with libciq-inject (CUDA_INJECTION64_PATH)
// and a control FIFO of its own (CIQ_KERNEL_CONTROL, <run>/kernel-control[-gpuN].fifo).
// After every answer the executor writes `cut DIR` to it and waits for the
// library to write the kernels timed since the last cut into DIR: a
// benchmark request's into the directory the Evaluator gave the step
// (CIQ_KERNEL_TRACE in Step::env, read like a process' trace), a check's
// into a scratch directory that is then emptied. So each request's trace
// holds that request's launches only; the first request of a fresh server
// also holds its start-up's (the Evaluator asks it again).
#pragma once

#include "tuner/measure/executor.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ciq::tuner {

class BenchServerExecutor final : public Executor {
public:
  /// `builds` runs the build steps, and gives the slots (the GPUs).
  BenchServerExecutor(const TuningSetup& setup, std::shared_ptr<Executor> builds);
  /// Ends the servers, and removes their kernel-timing FIFOs.
  ~BenchServerExecutor() override;

  /// A server needs --bench (the request) and --build (it loads what the
  /// build wrote; it does not compile), unless the space has no compiler
  /// knobs.
  Result<void> check_options(const TuningSetup& setup) override;
  /// Server logs go there: bench-server[-gpuN].log.
  void use_run_directory(const std::string& run_dir) override;
  Result<void> start(bool resume) override;

  std::vector<std::string> slots() const override;
  bool schedules_gpus() const override;
  Result<StepResult> run_step(const Step& step) override;

private:
  /// The resident benchmark of `gpu` (held by the caller), started if none runs.
  Result<Coprocess*> server_for(const std::string& gpu);
  std::string server_log(const std::string& gpu) const;  // <run dir>/bench-server[-gpuN].log
  Result<StepResult> ask_server(const Step& step);
  // ask_server's parts: a server out of step with its requests (it wrote
  // after its last answer, or exited) retired before a request; the
  // answer's status line read into `done` (an error with code k_ask_again:
  // the server had quit before the request, a fresh one must take it); the
  // request's kernels cut from the server's trace (kernel-time).
  static constexpr const char* k_ask_again = "ask-again";
  void retire_out_of_step(const Step& step, const std::string& log);
  Result<void> read_status(const Step& step, Coprocess& server, bool fresh, const Result<std::string>& status, std::uint64_t id,
                           const std::string& log, StepResult& done);
  Result<void> cut_request_trace(const Step& step, const std::string& log);
  /// kernel-time: has the server of `gpu` write what it timed since the
  /// last cut into `dir`; an error when its library does not answer, or
  /// (when `needed`: a benchmark request's) is not listening at all.
  Result<void> cut_kernel_trace(const std::string& gpu, const std::string& dir, bool needed);
  std::string control_fifo(const std::string& gpu) const;

  std::shared_ptr<Executor> builds_;
  std::string command_;
  bool shell_;
  std::string run_dir_;
  double server_start_;
  std::string inject_library_; // kernel-time: libciq-inject, loaded into each server; "" = none
  std::map<std::string, std::unique_ptr<Coprocess>> servers_; // per GPU; used only by the GPU's holder
  std::atomic<std::uint64_t> next_request_{1}; // request ids, unique in the run: an answer must echo its request's
};

} // namespace ciq::tuner
