// Tests of cache/record.h: a cache entry's text form.
#include "cache/record.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::cache;
using namespace ciq::spaces;

TEST(Record, round_trip_with_provenance) {
  Record r;
  r.kind = cache::RecordKind::kernel;
  r.kernel = "_Z1kv";
  r.target = "sm_90a";
  r.ptxas = "13.0.88";
  r.flags = "opt-level=2";
  r.created = "2026-12-02T10:00:00Z";
  r.source = "ciq-tuner 0.1.0";
  r.provenance = {{"gpu", "NVIDIA H200"}, {"baseline", "1.25 ms"}, {"p_value", "0.001"}};
  (void)add_assignment(r.controls, "maxrregcount=128");
  r.controls.space = "ptxas-13";
  auto back = parse_record(format_record(r), "t");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kernel, r.kernel);
  EXPECT_EQ(back->flags, r.flags);
  EXPECT_EQ(back->provenance_value("gpu"), "NVIDIA H200");
  EXPECT_EQ(back->provenance_value("baseline"), "1.25 ms");
  EXPECT_EQ(back->controls, r.controls);
}

TEST(Record, rejects_non_records) {
  EXPECT_FALSE(parse_record("kind = kernel\n[controls]\n", "t").ok());
  EXPECT_FALSE(parse_record("format = ciq-record/1\nkind = kernel\n", "t").ok());
  EXPECT_FALSE(parse_record("format = ciq-record/1\nkind = other\n[controls]\n", "t").ok());
  EXPECT_TRUE(parse_record("format = ciq-record/1\nkind = module\n[controls]\nspace = x\n", "t").ok());
}
