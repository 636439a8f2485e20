// The run's benchmark slots (one per --gpus entry, or the executor's):
// a benchmark or check holds one while it runs, so that no two runs share a
// GPU. Shared by the evaluations in flight (--jobs) and the verification;
// every member is safe to call from several threads.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace ciq::tuner {

class GpuPool {
public:
  /// The pool of `slots` (Executor::slots()), all free.
  explicit GpuPool(std::vector<std::string> slots);

  /// Every slot, in the order given: the first is the reference of per-GPU
  /// baselines and where a verification runs.
  const std::vector<std::string>& slots() const { return slots_; }

  /// Takes `wanted`, or the free slot released last when `wanted` is "",
  /// waiting until it is free; adds the seconds waited to `*waited` when
  /// given. A `wanted` that is not a slot waits for ever: callers name only
  /// slots().
  std::string acquire(double* waited = nullptr, const std::string& wanted = "");
  /// Gives `gpu` back (acquire()d before) and wakes the waiters.
  void release(const std::string& gpu);
  /// How many slots are free now.
  std::size_t free_slots() const;

private:
  const std::vector<std::string> slots_;
  std::vector<std::string> idle_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
};

} // namespace ciq::tuner
