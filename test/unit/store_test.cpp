#include "cache/store.h"
#include "cache/entries.h"

#include "test/unit/temp_cache.h"
#include "utils/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ciq;
using namespace ciq::cache;

TEST(Store, absent_store_is_nullopt_not_error) {
  TempCache t;
  auto s = Store::open_for_reading(join_path(t.path(), "nothing-here"));
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->has_value());
}

TEST(Store, miss_returns_nullopt) {
  TempCache t;
  auto s = Store::open_for_writing(t.path());
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto v = s->get(Table::records, "no-such-key");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_value());
}

TEST(Store, put_get_remove_and_iterate) {
  TempCache t;
  {
    auto s = Store::open_for_writing(t.path());
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(s->put(Table::records, "b", "2").ok());
    ASSERT_TRUE(s->put(Table::records, "a", "1").ok());
    ASSERT_TRUE(s->put(Table::blobs, "a", "blob").ok());
  }
  auto r = Store::open_for_reading(t.path());
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ(*(*r)->get(Table::records, "a").value(), "1");
  EXPECT_EQ(*(*r)->get(Table::blobs, "a").value(), "blob");
  std::string order;
  ASSERT_TRUE((*r)->for_each(Table::records, [&](std::string_view k, std::string_view) {
                  order += k;
                  return true;
                }).ok());
  EXPECT_EQ(order, "ab");
  EXPECT_EQ(*(*r)->count(Table::records), 2u);
  EXPECT_FALSE((*r)->put(Table::records, "c", "3").ok()); // read-only
  r->reset();
  auto w = Store::open_for_writing(t.path());
  EXPECT_TRUE(w->apply({Change{Table::records, "a", std::nullopt}}).ok());
  EXPECT_FALSE(*w->get(Table::records, "a"));
  EXPECT_TRUE(w->apply({Change{Table::records, "a", std::nullopt}}).ok()); // an absent key: nothing to do
}

// A batch over several tables is one transaction: all of it lands, or,
// when one change cannot be made (a key longer than LMDB allows), none.
TEST(Store, apply_is_all_or_nothing_across_tables) {
  TempCache t;
  auto s = Store::open_for_writing(t.path());
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->put(Table::quarantine, "m", "bad").ok());
  ASSERT_TRUE(s->apply({{Table::records, "m", "module"}, {Table::records, "k", "kernel"}, {Table::quarantine, "m", std::nullopt},
                        {Table::quarantine, "absent", std::nullopt}})
                  .ok());
  EXPECT_EQ(*s->get(Table::records, "m").value(), "module");
  EXPECT_EQ(*s->get(Table::records, "k").value(), "kernel");
  EXPECT_FALSE(s->get(Table::quarantine, "m").value().has_value());

  auto r = s->apply({{Table::records, "m", "changed"}, {Table::records, std::string(600, 'x'), "too long a key"}});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(*s->get(Table::records, "m").value(), "module") << "the first change was rolled back";
}

TEST(Store, grows_the_map_when_full) {
  TempCache t;
  auto s = Store::open_for_writing(t.path(), k_patient_write_wait, 1 << 20);
  ASSERT_TRUE(s.ok());
  // 1.5 MiB in 3 values exceeds the initial 1 MiB map.
  std::string big(512u << 10, 'x');
  for (int i = 0; i < 3; ++i) {
    auto r = s->put(Table::blobs, "k" + std::to_string(i), big);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  EXPECT_EQ(*s->count(Table::blobs), 3u);
}

TEST(Store, garbage_data_file_is_an_error_not_a_crash) {
  TempCache t;
  { ASSERT_TRUE(Store::open_for_writing(t.path()).ok()); }
  std::string data = join_path(join_path(t.path(), "db"), "data.mdb");
  ASSERT_TRUE(write_file_atomic(data, std::string(64 << 10, '\x5a')).ok());
  auto s = Store::open_for_reading(t.path());
  EXPECT_FALSE(s.ok());
}

// A FIFO or device planted as data.mdb is refused at once, never opened
// (opening a FIFO blocks for ever).
TEST(Store, a_data_file_that_is_not_a_regular_file_is_refused) {
  TempCache t;
  { ASSERT_TRUE(Store::open_for_writing(t.path()).ok()); }
  std::string data = join_path(join_path(t.path(), "db"), "data.mdb");
  ASSERT_EQ(::unlink(data.c_str()), 0);
  ASSERT_EQ(::mkfifo(data.c_str(), 0644), 0);
  auto r = Store::open_for_reading(t.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is not a regular file"), std::string::npos) << r.error().message;
  EXPECT_FALSE(Store::open_for_writing(t.path()).ok());
}

// A writer waits for another writer's lock only as long as it was told,
// then fails "busy" with nothing written.
TEST(Store, a_held_writer_lock_bounds_the_wait) {
  TempCache t;
  auto s = Store::open_for_writing(t.path(), std::chrono::milliseconds(200));
  ASSERT_TRUE(s.ok());
  auto held = WriterLock::acquire(join_path(t.path(), "db"), std::chrono::milliseconds(0));
  ASSERT_TRUE(held.ok());
  auto start = std::chrono::steady_clock::now();
  auto w = s->put(Table::records, "k", "v"); // flock is per open file: this one waits
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, "busy");
  EXPECT_NE(w.error().message.find("nothing was written"), std::string::npos) << w.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// One remover of entries: each key's record and quarantine mark go together,
// every key in one transaction; other keys and tables stay.
TEST(Store, remove_entries_takes_records_and_marks_together) {
  TempCache t;
  auto s = Store::open_for_writing(t.path());
  ASSERT_TRUE(s.ok());
  std::string a(16, 'a'), b(16, 'b'), c(16, 'c');
  for (const auto& k : {a, b, c}) ASSERT_TRUE(s->put(Table::records, k, "record").ok());
  ASSERT_TRUE(s->put(Table::quarantine, a, "why").ok());
  ASSERT_TRUE(s->put(Table::blobs, a, "blob").ok());
  ASSERT_TRUE(remove_entries(*s, {a, b}).ok());
  EXPECT_FALSE(s->get(Table::records, a).value());
  EXPECT_FALSE(s->get(Table::quarantine, a).value());
  EXPECT_FALSE(s->get(Table::records, b).value());
  EXPECT_TRUE(s->get(Table::records, c).value());
  EXPECT_TRUE(s->get(Table::blobs, a).value());
  EXPECT_TRUE(remove_entries(*s, {}).ok());
  EXPECT_EQ(entry_removal(c).size(), 2u);
}
