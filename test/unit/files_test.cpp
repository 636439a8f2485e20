// Tests of utils/files.h.
#include "utils/files.h"

#include <cstdint>
#include <gtest/gtest.h>

using namespace ciq;

TEST(Files, free_bytes_of_a_path_not_made_yet_is_its_parents) {
  auto tmp = ScratchDir::create("ciq-free");
  ASSERT_TRUE(tmp);
  auto here = free_bytes(tmp->path());
  auto below = free_bytes(join_path(tmp->path(), "no/such/cache"));
  ASSERT_TRUE(here && below);
  EXPECT_GT(*here, 0u);
  // The same file system; other writers may move it by a little.
  EXPECT_LT(*here > *below ? *here - *below : *below - *here, std::uint64_t(64) << 20);
}
