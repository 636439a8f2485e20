#include "utils/hash.h"

#include <gtest/gtest.h>

using namespace ciq;

TEST(Sha256, matches_fips_test_vectors) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, every_padding_length_differs) {
  // Lengths around the 55/56/64-byte padding boundaries must all work.
  std::string previous;
  for (int n = 50; n < 130; ++n) {
    auto h = to_hex(sha256(std::string(n, 'x')));
    EXPECT_NE(h, previous);
    previous = h;
  }
}

TEST(Hasher, fields_are_length_prefixed) {
  Hasher a, b;
  a.add_field("ab");
  a.add_field("c");
  b.add_field("a");
  b.add_field("bc");
  EXPECT_NE(a.digest(), b.digest());
}

TEST(Hasher, incremental_equals_one_shot) {
  Hasher h;
  h.add("hello ");
  h.add("world");
  EXPECT_EQ(h.digest(), xxh128("hello world"));
}

TEST(Hex, round_trip_and_rejects_bad_digits) {
  Hash128 h = xxh128("x");
  Hash128 back{};
  ASSERT_TRUE(from_hex(to_hex(h), back.data(), back.size()));
  EXPECT_EQ(h, back);
  EXPECT_FALSE(from_hex("zz", back.data(), 1));
  EXPECT_FALSE(from_hex("abc", back.data(), 1));
}
