// Build stamps (cache/stamps.h) and nvcc's dependency-file options
// (wrapper/deps.h).
#include "cache/record.h"
#include "cache/stamps.h"
#include "cache/entries.h"
#include "cache/store.h"
#include "spaces/control_set.h"
#include "utils/files.h"
#include "wrapper/deps.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

using namespace ciq;

namespace {

std::string record_text(const std::string& set, const std::string& created) {
  cache::Record r;
  r.kind = cache::RecordKind::kernel;
  r.kernel = "k";
  r.target = "sm_90a";
  r.ptxas = "13.0.88";
  r.created = created;
  r.source = "test";
  r.controls.space = "ptxas-13";
  EXPECT_TRUE(spaces::add_assignment(r.controls, set).ok());
  return cache::format_record(r);
}

std::int64_t mtime_ns(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

const Hash128 k_key = xxh128("a kernel key");

} // namespace

TEST(Stamps, follow_the_controls_not_when_the_entry_was_made) {
  EXPECT_EQ(cache::stamp_text(record_text("maxrregcount=64", "2026-01-01T00:00:00Z")),
            cache::stamp_text(record_text("maxrregcount=64", "2026-12-07T00:00:00Z")));
  EXPECT_NE(cache::stamp_text(record_text("maxrregcount=64", "x")), cache::stamp_text(record_text("maxrregcount=32", "x")));
  EXPECT_NE(cache::stamp_text(record_text("maxrregcount=64", "x")), cache::stamp_text(std::nullopt));
}

TEST(Stamps, a_write_rewrites_an_existing_stamp_only_when_what_it_answers_changes) {
  auto dir = ScratchDir::create("ciq-stamps").value();
  std::string none = cache::stamp_text(std::nullopt);
  auto path = cache::stamp_for_lookup(dir.path(), k_key, none, none);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(read_file(*path).value(), none);
  auto store = cache::Store::open_for_writing(dir.path()).value();
  std::string raw = digest_bytes(k_key);
  ASSERT_TRUE(store.put(cache::Table::records, raw, record_text("maxrregcount=64", "first")).ok());
  std::string tuned = read_file(*path).value();
  EXPECT_EQ(tuned, cache::stamp_text(record_text("maxrregcount=64", "any")));
  std::int64_t t = mtime_ns(*path);
  // The same controls stored again: the stamp is not touched.
  ASSERT_TRUE(store.put(cache::Table::records, raw, record_text("maxrregcount=64", "second")).ok());
  EXPECT_EQ(mtime_ns(*path), t);
  // Quarantined: the lookup answers nothing, so neither does the stamp.
  ASSERT_TRUE(store.put(cache::Table::quarantine, raw, "broke a compile").ok());
  EXPECT_EQ(read_file(*path).value(), none);
  ASSERT_TRUE(store.apply({cache::Change{cache::Table::quarantine, raw, std::nullopt}}).ok());
  EXPECT_EQ(read_file(*path).value(), tuned);
  ASSERT_TRUE(store.apply(cache::entry_removal(raw)).ok());
  EXPECT_EQ(read_file(*path).value(), none);
}

TEST(Stamps, a_write_makes_no_stamp_nobody_asked_for) {
  auto dir = ScratchDir::create("ciq-stamps").value();
  auto store = cache::Store::open_for_writing(dir.path()).value();
  ASSERT_TRUE(store.put(cache::Table::records, digest_bytes(k_key), record_text("maxrregcount=64", "x")).ok());
  EXPECT_FALSE(path_exists(cache::stamp_path(dir.path(), k_key)));
}

TEST(Stamps, a_lagging_stamp_is_brought_up_to_what_the_store_holds) {
  auto dir = ScratchDir::create("ciq-stamps").value();
  std::string none = cache::stamp_text(std::nullopt);
  std::string tuned = cache::stamp_text(record_text("maxrregcount=64", "x"));
  auto path = cache::stamp_for_lookup(dir.path(), k_key, none, none).value();
  // The lookup saw an entry the stamp does not show: the stamp takes what
  // the store holds now.
  ASSERT_TRUE(cache::stamp_for_lookup(dir.path(), k_key, tuned, tuned).has_value());
  EXPECT_EQ(read_file(path).value(), tuned);
}

TEST(Stamps, none_is_made_where_the_cache_directory_cannot_be) {
  auto dir = ScratchDir::create("ciq-stamps").value();
  ASSERT_TRUE(write_file_atomic(join_path(dir.path(), "file"), "x").ok());
  std::string none = cache::stamp_text(std::nullopt);
  EXPECT_FALSE(cache::stamp_for_lookup(join_path(dir.path(), "file/cache"), k_key, none, none).has_value());
}

TEST(DependencyFile, is_the_one_nvcc_writes_while_it_compiles) {
  using wrapper::compile_dependency_file;
  EXPECT_EQ(compile_dependency_file({"-c", "a.cu", "-o", "o/a.o", "-MD", "-MT", "o/a.o", "-MF", "o/a.o.d"}), "o/a.o.d");
  EXPECT_EQ(compile_dependency_file({"-c", "a.cu", "--dependency-output=x.d", "-MMD"}), "x.d");
  EXPECT_EQ(compile_dependency_file({"-c", "a.cu", "-o", "sub/a.o", "-MD"}), "sub/a.d");
  EXPECT_EQ(compile_dependency_file({"-c", "a.cu", "-o", "sub.dir/a", "--generate-dependencies-with-compile"}), "sub.dir/a.d");
  EXPECT_EQ(compile_dependency_file({"-c", "a.cu", "-o", "a.o"}), std::nullopt);                   // none asked for
  EXPECT_EQ(compile_dependency_file({"-M", "a.cu", "-MD", "-MF", "a.d"}), std::nullopt);           // no compile
  EXPECT_EQ(compile_dependency_file({"-c", "a.cu", "-MD"}), std::nullopt);                         // named after the input: not followed
  EXPECT_EQ(compile_dependency_file({"-optf", "args.txt", "-MD", "-MF", "a.d"}), std::nullopt);   // arguments in a file
}
