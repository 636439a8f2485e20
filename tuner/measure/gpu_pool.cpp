#include "tuner/measure/gpu_pool.h"

#include <algorithm>
#include <chrono>

namespace ciq::tuner {

GpuPool::GpuPool(std::vector<std::string> slots) : slots_(std::move(slots)), idle_(slots_) {}

std::string GpuPool::acquire(double* waited, const std::string& wanted) {
  auto started = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  auto it = idle_.end();
  freed_.wait(lock, [&] {
    it = wanted.empty() ? (idle_.empty() ? idle_.end() : idle_.end() - 1) : std::find(idle_.begin(), idle_.end(), wanted);
    return it != idle_.end();
  });
  if (waited) *waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string gpu = *it;
  idle_.erase(it);
  return gpu;
}

void GpuPool::release(const std::string& gpu) {
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(gpu);
  }
  freed_.notify_all(); // a waiter may want this GPU and no other
}

std::size_t GpuPool::free_slots() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

} // namespace ciq::tuner
