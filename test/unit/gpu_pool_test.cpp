// The benchmark slots (tuner/measure/gpu_pool.h): one holder per slot.
#include "tuner/measure/gpu_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace ciq::tuner;

TEST(GpuPool, a_wanted_slot_is_the_one_taken_and_any_takes_the_last_released) {
  GpuPool pool({"0", "1", "2"});
  EXPECT_EQ(pool.acquire(nullptr, "1"), "1");
  EXPECT_EQ(pool.free_slots(), 2u);
  EXPECT_EQ(pool.acquire(), "2");
  pool.release("1");
  EXPECT_EQ(pool.acquire(), "1");
  EXPECT_EQ(pool.slots(), (std::vector<std::string>{"0", "1", "2"}));
}

TEST(GpuPool, a_held_slot_is_waited_for_and_the_wait_is_counted) {
  GpuPool pool({"0"});
  std::string held = pool.acquire();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    pool.release(held);
  });
  double waited = 0;
  EXPECT_EQ(pool.acquire(&waited, "0"), "0");
  releaser.join();
  EXPECT_GT(waited, 0.01);
  EXPECT_EQ(pool.free_slots(), 0u);
}
