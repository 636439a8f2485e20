// What a tuning run evaluates candidates with, in two parts: the fixed
// configuration (TuningConfig: the user's commands, how and where they run,
// the objectives and the limits; filled in from the options by
// run/options.cpp and never changed afterwards) and the run's state
// (RunState: what the run learns as it goes and sets before the evaluators
// are made: its directory, the default build's warnings, the executor).
// TuningSetup is both, copied into every Evaluator of the run; its members
// keep their names (setup.run_dir, setup.build, ...).
#pragma once

#include "tuner/measure/replay.h"
#include "tuner/measure/slurm.h"
#include "tuner/objectives/objectives.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

class Executor;

struct TuningConfig {
  std::string build, bench, check; // commands; build and check optional
  // A benchmark that stays resident: started once per GPU, it gets --bench
  // and --check as requests (`ciq-request: ID`, their words, one per line,
  // then an empty line) and answers each with its output and a line
  // `ciq-status: ID N` (measure/bench_protocol.h).
  std::string bench_server;
  double server_start = 120;       // seconds a fresh server's first answer may take beyond `timeout`
  std::string inject_library;      // kernel-time: libciq-inject.so, loaded into each benchmark run
  bool shell = false;              // run them through /bin/sh -c
  double timeout = 0;              // seconds per command; 0 = none
  std::vector<Objective> objectives;
  int repeats = 3;                 // benchmark runs per evaluation
  std::string kernels;             // CIQ_KERNELS glob; "" = all
  std::vector<std::string> gpus;   // CUDA_VISIBLE_DEVICES values; one benchmark per GPU at a time
  bool gpu_baselines = true;       // several GPUs: compare each run with the default on its GPU (evaluator.h)
  int jobs = 1;                    // evaluations in flight
  bool memo = true;                // ciq-nvcc reuses the steps a candidate does not change (in memo_dir)
  std::string memo_dir;            // that memo: <run_dir>/memo, or a campaign's shared by its runs (--memo-dir); set by open_run
  std::shared_ptr<const ReplayData> replay; // answer from recorded samples: no commands run
  std::uint64_t replay_seed = 1;
  std::optional<SlurmConfig> slurm;  // run every command as a Slurm job (slurm.h); gpus then unused
};

struct RunState {
  std::string run_dir;
  bool compiler = true;            // the space has compiler knobs (else parameters only): from the discovered space
  std::string acf_cache_dir;       // with ACF candidates: the cache holding their blobs
  // The warnings ptxas and cicc gave the default build (the discovery's):
  // a candidate that adds another (a directive out of range and ignored, an
  // option dropped) is not compiled as asked, and is invalid.
  std::set<std::string> baseline_warnings;
  // `run --separately`: the targeted kernels (mangled names), each timed on
  // its own in every benchmark run (EvalRecord::kernel_samples) besides the
  // objectives; empty otherwise.
  std::vector<std::string> own_kernels;
  // kernel-time: the other kernels of the modules that hold a timed one
  // (mangled names). A module-wide option acts on them too, so every
  // benchmark run also sums their time (BenchRun::mates_ms), and a winner
  // that slows them by more than it gains is not shipped (verify.cpp).
  std::vector<std::string> module_mates;
  // Where the commands run (executor.h): made from the configuration by
  // make_executor() and shared by the run's evaluators, so that what it
  // started (resident benchmarks) and learnt (Slurm's settings, the run's
  // job name) serves all of them. Null: each Evaluator makes its own.
  std::shared_ptr<Executor> executor;
};

struct TuningSetup : TuningConfig, RunState {};

} // namespace ciq::tuner
