// Tests of cache/pack.h.
#include "cache/pack.h"

#include <gtest/gtest.h>

using namespace ciq;

TEST(Base64, KnownVectorsAndDamage) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : vectors) {
    EXPECT_EQ(cache::base64_encode(plain), encoded);
    auto back = cache::base64_decode(encoded);
    ASSERT_TRUE(back) << encoded;
    EXPECT_EQ(*back, plain);
  }
  std::string all;
  for (int c = 0; c < 256; ++c) all += char(c);
  EXPECT_EQ(*cache::base64_decode(cache::base64_encode(all)), all);
  for (const char* bad : {"Zg=", "Z===", "Zg==Zg==", "Zm9*", "Zm9v\n", "Zg=a"})
    EXPECT_FALSE(cache::base64_decode(bad)) << bad;
}
