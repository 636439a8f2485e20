// The journal's status field (tuner/rundir/journal.h): an enum in the
// tuner, the same words in the file as before, and a line whose status the
// tuner does not know is no record.
#include "tuner/rundir/journal.h"
#include "utils/files.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

TEST(Journal, every_status_is_written_as_its_word_and_read_back) {
  for (auto [status, word] : {std::pair{EvalStatus::ok, "\"status\":\"ok\""},
                              std::pair{EvalStatus::invalid, "\"status\":\"invalid\""},
                              std::pair{EvalStatus::same_code, "\"status\":\"same-code\""}}) {
    EvalRecord r;
    r.candidate = "x=1";
    r.status = status;
    std::string line = r.to_json();
    EXPECT_NE(line.find(word), std::string::npos) << line;
    auto back = EvalRecord::from_json(line);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->status, status);
  }
}

TEST(Journal, status_names_and_parse_are_inverse) {
  EXPECT_EQ(status_name(EvalStatus::same_code), "same-code");
  EXPECT_EQ(parse_status("same-code"), EvalStatus::same_code);
  EXPECT_EQ(parse_status("ok"), EvalStatus::ok);
  EXPECT_EQ(parse_status("invalid"), EvalStatus::invalid);
  EXPECT_EQ(parse_status("same_code"), std::nullopt);
  EXPECT_EQ(parse_status(""), std::nullopt);
}

// A line whose status is none of the three (a journal of another version,
// an edited file) or that has none is not read as a record: reading it as
// "ok" would let a result nobody measured into the search, so its
// evaluation runs again, as for any line that does not parse.
TEST(Journal, a_line_with_an_unknown_status_is_skipped_and_its_evaluation_runs_again) {
  auto unknown = EvalRecord::from_json(R"({"n":0,"candidate":"x=1","status":"timeout","valid":false})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'timeout'"), std::string::npos) << unknown.error().message;
  EXPECT_FALSE(EvalRecord::from_json(R"({"n":0,"candidate":"x=1","valid":true})").ok());

  ScratchDir dir = *ScratchDir::create("journal-status");
  std::string path = join_path(dir.path(), "journal.jsonl");
  EvalRecord good;
  good.candidate = "default";
  good.status = EvalStatus::ok;
  ASSERT_TRUE(append_whole_line(path, good.to_json()).ok());
  ASSERT_TRUE(append_whole_line(path, R"({"n":1,"candidate":"x=1","status":"timeout","valid":false})").ok());
  auto records = load_journal(path);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].candidate, "default");
}
