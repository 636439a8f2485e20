// rundir/results.h: results.csv's header and rows, and its reader.
#include "tuner/rundir/results.h"
#include "utils/files.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::tuner;

namespace {

std::vector<Objective> two_objectives() {
  Objective time, flops;
  time.name = "metric:t=([0-9]{1,3})"; // a comma: quoted in the header
  flops.name = "metric:gflops";
  flops.maximize = true;
  return {time, flops};
}

EvalRecord record(bool valid) {
  EvalRecord r;
  r.number = 3;
  r.generation = 1;
  r.candidate = "maxrregcount=64;param:x=1";
  r.evaluation.valid = valid;
  r.evaluation.objectives = {2.5, -100}; // the maximised one negated, as the search keeps it
  r.evaluation.reason = valid ? "" : "check failed, exit 1";
  r.status = valid ? EvalStatus::ok : EvalStatus::invalid;
  r.build_seconds = 1.5;
  r.bench_seconds = 0.25;
  return r;
}

} // namespace

TEST(Results, header_and_rows) {
  ResultsCsv csv("/runs/a", two_objectives());
  EXPECT_EQ(csv.path(), "/runs/a/results.csv");
  EXPECT_EQ(csv.header(), "number,generation,candidate,\"metric:t=([0-9]{1,3})\",metric:gflops,status,reason,build_s,bench_s");
  // Maximised objectives are shown un-negated; an invalid row has no values.
  EXPECT_EQ(csv.row(record(true)), "3,1,maxrregcount=64;param:x=1,2.5,100,ok,,1.5,0.25");
  EXPECT_EQ(csv.row(record(false)), "3,1,maxrregcount=64;param:x=1,,,invalid,\"check failed, exit 1\",1.5,0.25");
}

TEST(Results, csv_records_parse_as_written) {
  EXPECT_EQ(parse_csv_record("a,\"b,c\",\"say \"\"hi\"\"\",\n1,2"), (std::vector<std::string>{"a", "b,c", "say \"hi\"", ""}));
  EXPECT_EQ(parse_csv_record("\"two\nlines\",x\r\ny"), (std::vector<std::string>{"two\nlines", "x"}));
  EXPECT_EQ(parse_csv_record(""), (std::vector<std::string>{""}));
}

// The report learns the objectives' names from the header: a name holding
// a comma is one name.
TEST(Results, objective_names_read_back) {
  auto dir = ScratchDir::create("ciq-results");
  ASSERT_TRUE(dir);
  ResultsCsv csv(dir->path(), two_objectives());
  ASSERT_TRUE(csv.begin());
  ASSERT_TRUE(csv.append(record(true)));
  auto names = read_objective_names(dir->path());
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_EQ(*names, (std::vector<std::string>{"metric:t=([0-9]{1,3})", "metric:gflops"}));
  ASSERT_TRUE(csv.rewrite({record(false)}));
  auto text = read_file(csv.path());
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, csv.header() + "\n" + csv.row(record(false)) + "\n");

  ASSERT_TRUE(write_file_atomic(csv.path(), "name,value\n"));
  EXPECT_FALSE(read_objective_names(dir->path()));
  EXPECT_FALSE(read_objective_names(join_path(dir->path(), "absent")));
}
