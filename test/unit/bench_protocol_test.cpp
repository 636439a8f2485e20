// The --bench-server wire protocol as the tuner writes requests and reads
// answers' status lines (tuner/measure/bench_protocol.h).
#include "tuner/measure/bench_protocol.h"

#include <gtest/gtest.h>

using namespace ciq::tuner;

TEST(BenchProtocol, a_request_is_its_id_then_its_words_then_an_empty_line) {
  auto message = encode_request(12, {"--x", "3", "--dir=/a b"});
  ASSERT_TRUE(message.ok());
  EXPECT_EQ(*message, "ciq-request: 12\n--x\n3\n--dir=/a b\n\n");
  EXPECT_FALSE(encode_request(1, {"--x", ""}).ok());
  EXPECT_FALSE(encode_request(1, {"a\nb"}).ok());
}

TEST(BenchProtocol, the_status_of_an_answer_to_the_request_asked) {
  auto status = read_answer_status("12 3", 12);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(*status, 3);
  EXPECT_EQ(*read_answer_status("12 0\r", 12), 0);
  EXPECT_EQ(*read_answer_status("18446744073709551615 255", 18446744073709551615ull), 255);
}

TEST(BenchProtocol, another_requests_answer_is_extra_or_late) {
  auto status = read_answer_status("11 0", 12);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "garbled");
  EXPECT_EQ(status.error().message, "answered request 11 when asked request 12 (an extra or late answer)");
}

TEST(BenchProtocol, a_status_without_the_id_names_the_protocol_change) {
  auto status = read_answer_status("0", 12);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("without its request's id: requests now start with a line `ciq-request: ID`"),
            std::string::npos)
      << status.error().message;
}

TEST(BenchProtocol, no_spelling_of_a_number_becomes_another) {
  // 4294967296 used to be cut to int 0: success.
  for (const char* bad : {"12 4294967296", "12 256", "12 -1", "12 +0", "12 00", "12 1e400", "12 inf", "12 nan", "012 0",
                          "12 0 0", "12", "", " ", "12 maybe", "99999999999999999999 0", "12  0x"}) {
    auto status = read_answer_status(bad, 12);
    EXPECT_FALSE(status.ok()) << bad;
  }
}

TEST(BenchProtocol, what_a_message_shows_of_a_servers_text_is_short_and_printable) {
  EXPECT_EQ(server_text_excerpt("f=0\nciq-status: 3 0\n"), "f=0?ciq-status: 3 0?");
  EXPECT_EQ(server_text_excerpt(std::string(100, 'a')), std::string(60, 'a') + "...");
}
