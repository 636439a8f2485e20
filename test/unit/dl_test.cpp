// Tests of utils/dl.h: loading a library at run time and resolving a table
// of its entry points, with every missing required one named in one message.
#include "utils/dl.h"

#include <gtest/gtest.h>

using namespace ciq;

// libc has strlen and getpid; it has no cuInit or nvmlInit_v2.
TEST(Dl, resolves_a_table_and_names_every_missing_required_entry) {
  std::size_t (*strlen_fn)(const char*) = nullptr;
  int (*cu_init)(unsigned) = nullptr;
  int (*nvml_init)() = nullptr;
  int (*optional_fn)() = nullptr;
  dl::Library lib = dl::load({"libc.so.6"}, {dl::need(strlen_fn, "strlen"), dl::need(cu_init, "cuInit"),
                                             dl::may(optional_fn, "ciqNoSuchFunction"), dl::need(nvml_init, "nvmlInit_v2")});
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_EQ(lib.missing, "cuInit, nvmlInit_v2"); // the optional one is not named
  EXPECT_EQ(lib.error, "libc.so.6 lacks cuInit, nvmlInit_v2");
}

TEST(Dl, stores_required_optional_and_older_names) {
  std::size_t (*strlen_fn)(const char*) = nullptr;
  int (*getpid_fn)() = nullptr;
  int (*absent)() = reinterpret_cast<int (*)()>(1); // overwritten with null
  dl::Library lib = dl::load({"libc.so.6"}, {dl::need(strlen_fn, "strlen"), dl::need(getpid_fn, "ciqNoSuchFunction_v2", "getpid"),
                                             dl::may(absent, "ciqNoSuchFunction")});
  ASSERT_NE(lib.handle, nullptr) << lib.error;
  EXPECT_EQ(lib.path, "libc.so.6");
  EXPECT_TRUE(lib.error.empty());
  ASSERT_NE(strlen_fn, nullptr);
  EXPECT_EQ(strlen_fn("four"), 4u);
  EXPECT_NE(getpid_fn, nullptr);
  EXPECT_EQ(absent, nullptr);
}

// Candidates are tried in order; the error names each and why it failed.
TEST(Dl, tries_candidates_in_order_and_says_why_each_failed) {
  std::size_t (*strlen_fn)(const char*) = nullptr;
  int (*cu_init)(unsigned) = nullptr;
  dl::Library none = dl::load({"/nonexistent/libciq-none.so", "libc.so.6"}, {dl::need(cu_init, "cuInit")});
  EXPECT_EQ(none.handle, nullptr);
  EXPECT_NE(none.error.find("/nonexistent/libciq-none.so"), std::string::npos) << none.error;
  EXPECT_NE(none.error.find("; libc.so.6 lacks cuInit"), std::string::npos) << none.error;
  EXPECT_EQ(none.missing, "cuInit");

  dl::Library found = dl::load({"/nonexistent/libciq-none.so", "libc.so.6"}, {dl::need(strlen_fn, "strlen")});
  ASSERT_NE(found.handle, nullptr);
  EXPECT_EQ(found.path, "libc.so.6");
  EXPECT_TRUE(found.error.empty());

  dl::Library nothing = dl::load({"/nonexistent/libciq-none.so"}, {dl::need(strlen_fn, "strlen")});
  EXPECT_EQ(nothing.handle, nullptr);
  EXPECT_TRUE(nothing.missing.empty()); // not loaded, so nothing is said to be missing
}

TEST(Dl, already_loaded_sees_only_libraries_in_the_process) {
  EXPECT_TRUE(dl::already_loaded("libc.so.6"));
  EXPECT_FALSE(dl::already_loaded("libciq-never-loaded.so.1"));
}
