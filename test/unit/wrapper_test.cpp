#include "cache/counters.h"
#include "cache/entries.h"
#include "cache/pack.h"
#include "cache/record.h"
#include "cache/storage.h"
#include "cache/store.h"
#include "spaces/space.h"
#include "utils/files.h"
#include "wrapper/lookup.h"
#include "wrapper/nvcc_wrapper.h"
#include "wrapper/resources.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::wrapper;

TEST(Resources, parses_ptxas_verbose_output) {
  const char* text = "ptxas info    : 0 bytes gmem\n"
                     "ptxas info    : Compiling entry function '_Z1av' for 'sm_90a'\n"
                     "ptxas info    : Function properties for _Z1av\n"
                     "    88 bytes stack frame, 84 bytes spill stores, 80 bytes spill loads\n"
                     "ptxas info    : Used 255 registers, used 1 barriers, 88 bytes cumulative stack size, 1024 bytes smem, 360 bytes cmem[0]\n"
                     "ptxas info    : Compile time = 87.117 ms\n"
                     "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90a'\n"
                     "ptxas info    : Function properties for helper\n"
                     "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                     "ptxas info    : Function properties for _Z1bv\n"
                     "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                     "ptxas info    : Used 8 registers, used 0 barriers\n";
  auto r = parse_resources(text);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r["_Z1av"].registers, 255);
  EXPECT_EQ(r["_Z1av"].spill_stores, 84);
  EXPECT_EQ(r["_Z1av"].spill_loads, 80);
  EXPECT_EQ(r["_Z1av"].stack, 88);
  EXPECT_EQ(r["_Z1av"].shared, 1024);
  EXPECT_EQ(r["_Z1av"].barriers, 1);
  EXPECT_DOUBLE_EQ(r["_Z1av"].compile_ms, 87.117);
  EXPECT_EQ(r["_Z1bv"].registers, 8);
  EXPECT_EQ(r["_Z1bv"].stack, 0); // helper's frame is not the kernel's
}

TEST(Resources, warnings_without_their_location) {
  std::string text = "ptxas info    : 0 bytes gmem\n"
                     "ptxas /tmp/tmpxft_1_k.ptx, line 12; warning : .minnctapersm is ignored\n"
                     "ptxas warning : Value of threads per SM for entry k is out of range\n"
                     "ptxas /tmp/tmpxft_2_k.ptx, line 40; warning : .minnctapersm is ignored\n";
  auto w = compiler_warnings(text, "ptxas");
  ASSERT_EQ(w.size(), 2u); // the same message at two places is one warning
  EXPECT_EQ(w[0], "ptxas warning : .minnctapersm is ignored");
  EXPECT_EQ(w[1], "ptxas warning : Value of threads per SM for entry k is out of range");
  EXPECT_TRUE(compiler_warnings("ptxas info    : Used 8 registers\n", "ptxas").empty());
}

TEST(Resources, strip_keeps_everything_else) {
  std::string in = "ptxas warning : something\nptxas info    : Used 8 registers\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nlast\n";
  EXPECT_EQ(strip_verbose_lines(in), "ptxas warning : something\nlast\n");
}

TEST(Nvcc, shell_quote) {
  EXPECT_EQ(shell_quote("/a b/ciq-ptxas"), "'/a b/ciq-ptxas'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(Nvcc, lto_device_link_detection) {
  EXPECT_TRUE(is_lto_device_link({"-dlto", "-dlink", "a.o", "-o", "d.o"}));
  EXPECT_TRUE(is_lto_device_link({"-arch=sm_90", "-dlto", "a.o", "b.o", "-o", "app"}));
  EXPECT_FALSE(is_lto_device_link({"-dlto", "-dc", "a.cu"}));
  EXPECT_FALSE(is_lto_device_link({"-dlto", "-c", "a.cu"}));
  EXPECT_FALSE(is_lto_device_link({"-dlink", "a.o"}));
}

namespace {
const char* k_two = ".version 9.0\n.target sm_90a\n.address_size 64\n"
                    ".visible .entry a(\n)\n{\nret;\n}\n.visible .entry b(\n)\n{\nexit;\n}\n";

const spaces::Space& test_space() {
  static const spaces::Space space =
      spaces::parse_space("[space]\nname = ptxas-13\ntool = ptxas\nversions = 13.0..13.99\n"
                          "[option.opt-level]\nrender = --opt-level={}\nrange = 0..3\ndefault = 3\nsafety = exact\n"
                          "[option.maxrregcount]\nrender = --maxrregcount={}\nrange = 16..255\ndefault = none\nsafety = exact\n"
                          "[directive.maxnreg]\nrender = .maxnreg {}\nrange = 16..255\ndefault = none\nsafety = exact\n"
                          "[conflict.low]\nwhen = opt-level: 0\nexcludes = maxrregcount: 16\n",
                          "test.space")
          .value();
  return space;
}

cache::EntryRules rules() {
  cache::EntryRules r;
  r.running_space = []() -> Result<const spaces::Space*> { return &test_space(); };
  return r;
}

void put(cache::Store& store, const Hash128& key, const std::string& kernel, std::initializer_list<const char*> sets) {
  cache::Record r;
  r.kind = kernel.empty() ? cache::RecordKind::module : cache::RecordKind::kernel;
  r.kernel = kernel;
  r.controls.space = "ptxas-13";
  for (auto s : sets) ASSERT_TRUE(spaces::add_assignment(r.controls, s).ok());
  ASSERT_TRUE(cache::write_entries(store, std::vector<cache::Entry>{{key, r}}).ok());
}
} // namespace

TEST(Storage, module_key_wins_then_kernel_keys_merge) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  {
    cache::Storage storage(dir.path());
    auto miss = storage.find_module(module, ctx, rules());
    ASSERT_TRUE(miss.ok());
    EXPECT_FALSE(miss->has_value());
  }
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::kernel_key(module, "a", ctx), "a", {"maxrregcount=64", "a:maxnreg=32", "b:maxnreg=99"});
    put(store, cache::kernel_key(module, "b", ctx), "b", {"maxrregcount=64", "b:maxnreg=40"});
  }
  {
    cache::Storage storage(dir.path());
    auto merged = storage.find_module(module, ctx, rules());
    ASSERT_TRUE(merged.ok() && merged->has_value());
    EXPECT_EQ((*merged)->matched, cache::RecordKind::kernel);
    EXPECT_EQ((*merged)->tier, cache::Tier::local);
    EXPECT_EQ((*merged)->keys.size(), 2u);
    EXPECT_EQ((*merged)->controls.options.at("maxrregcount"), "64");
    EXPECT_EQ((*merged)->controls.kernels.at("a").at("maxnreg"), "32");
    EXPECT_EQ((*merged)->controls.kernels.at("b").at("maxnreg"), "40"); // a's record does not speak for b
  }
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::module_key(module, ctx), "", {"maxrregcount=128"});
  }
  cache::Storage storage(dir.path());
  auto whole = storage.find_module(module, ctx, rules());
  ASSERT_TRUE(whole.ok() && whole->has_value());
  EXPECT_EQ((*whole)->matched, cache::RecordKind::module);
  EXPECT_EQ((*whole)->controls.options.at("maxrregcount"), "128");
  EXPECT_TRUE((*whole)->controls.kernels.empty());
}

// A module entry that sets nothing ("tuned, no gain") does not hide the
// kernels' own winners (another run's, or a teammate's imported): it
// answers only where no kernel entry does.
TEST(Storage, a_no_gain_module_entry_does_not_hide_kernel_winners) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::module_key(module, ctx), "", {});
  }
  {
    cache::Storage storage(dir.path());
    auto alone = storage.find_module(module, ctx, rules());
    ASSERT_TRUE(alone.ok() && alone->has_value());
    EXPECT_EQ((*alone)->matched, cache::RecordKind::module);
    EXPECT_TRUE((*alone)->controls.empty());
    EXPECT_EQ((*alone)->keys, std::vector<Hash128>{cache::module_key(module, ctx)});
  }
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::kernel_key(module, "b", ctx), "b", {"b:maxnreg=40"});
  }
  cache::Storage storage(dir.path());
  auto kernels = storage.find_module(module, ctx, rules());
  ASSERT_TRUE(kernels.ok() && kernels->has_value());
  EXPECT_EQ((*kernels)->matched, cache::RecordKind::kernel);
  EXPECT_EQ((*kernels)->controls.kernels.at("b").at("maxnreg"), "40");
  // Only the kernel entry contributed (a failure quarantines it alone).
  EXPECT_EQ((*kernels)->keys, std::vector<Hash128>{cache::kernel_key(module, "b", ctx)});
}

// Under a "tuned, no gain" module entry its kernels' entries answer as
// they would without it, module-wide options included (a verified winner
// is not disabled by an imported no-gain entry); the module entry answers
// where they set nothing, or cannot be merged (not a miss, which would fall
// through to a pack or the remote). Kernel entries that set nothing are not
// among the hit's keys (a failing compile quarantines only what set it).
TEST(Storage, a_no_gain_module_entry_answers_where_its_kernels_set_nothing) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::module_key(module, ctx), "", {});
    put(store, cache::kernel_key(module, "a", ctx), "a", {"maxrregcount=64"});
    put(store, cache::kernel_key(module, "b", ctx), "b", {});
  }
  {
    cache::Storage storage(dir.path());
    auto found = storage.find_module(module, ctx, rules());
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->matched, cache::RecordKind::kernel);
    EXPECT_EQ((*found)->controls.options.at("maxrregcount"), "64");
    EXPECT_EQ((*found)->keys, std::vector<Hash128>{cache::kernel_key(module, "a", ctx)});
  }
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::kernel_key(module, "a", ctx), "a", {});
  }
  {
    cache::Storage storage(dir.path());
    auto found = storage.find_module(module, ctx, rules());
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->matched, cache::RecordKind::module);
    EXPECT_TRUE((*found)->controls.empty());
  }
  {
    // Two kernels' options that conflict as a pair: the merge is refused.
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::kernel_key(module, "a", ctx), "a", {"opt-level=0"});
    put(store, cache::kernel_key(module, "b", ctx), "b", {"maxrregcount=16"});
  }
  cache::Storage storage(dir.path());
  auto refused = storage.find_module(module, ctx, rules());
  ASSERT_TRUE(refused.ok() && refused->has_value());
  EXPECT_EQ((*refused)->matched, cache::RecordKind::module);
  EXPECT_TRUE((*refused)->controls.empty());
  EXPECT_EQ(storage.refusals().size(), 1u);
}

TEST(Storage, disagreeing_kernel_options_are_dropped_and_quarantine_is_a_miss) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::kernel_key(module, "a", ctx), "a", {"maxrregcount=64", "opt-level=2"});
    put(store, cache::kernel_key(module, "b", ctx), "b", {"maxrregcount=96", "opt-level=2"});
  }
  cache::Storage storage(dir.path());
  auto merged = storage.find_module(module, ctx, rules());
  ASSERT_TRUE(merged.ok() && merged->has_value());
  EXPECT_FALSE((*merged)->controls.options.count("maxrregcount"));
  EXPECT_EQ((*merged)->controls.options.at("opt-level"), "2");

  // Quarantined through the storage layer (as a failed compile does): a miss.
  storage.quarantine(**merged, {cache::kernel_key(module, "a", ctx), cache::kernel_key(module, "b", ctx)}, "broke");
  auto none = storage.find_module(module, ctx, rules());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// An entry the running space does not allow, or filed under another kernel's
// key, is refused and counted, never returned; the lookup goes on to the
// next entry.
TEST(Storage, refused_entries_are_counted_and_skipped) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::module_key(module, ctx), "", {"maxrregcount=300"}); // out of range
    put(store, cache::kernel_key(module, "a", ctx), "b", {"opt-level=1"}); // filed under a's key
    put(store, cache::kernel_key(module, "b", ctx), "b", {"opt-level=2"});
  }
  cache::Storage storage(dir.path());
  auto found = storage.find_module(module, ctx, rules());
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->matched, cache::RecordKind::kernel);
  EXPECT_EQ((*found)->controls.options.at("opt-level"), "2");
  ASSERT_EQ(storage.refusals().size(), 2u);
  EXPECT_NE(storage.refusals()[0].find("maxrregcount"), std::string::npos);
  EXPECT_NE(storage.refusals()[1].find("not the kernel record it is filed under"), std::string::npos);
  cache::Tally tally(cache::Tool::ptxas);
  cache::count_events(storage, tally);
  EXPECT_EQ(tally.names(), std::vector<std::string>{"rejected"}); // one compile met them
}

// Two kernel entries that pass alone may merge into a set the space
// forbids (a conflicting pair): the merged set is refused too.
TEST(Storage, a_merged_set_is_checked_as_a_whole) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    put(store, cache::kernel_key(module, "a", ctx), "a", {"opt-level=0"});
    put(store, cache::kernel_key(module, "b", ctx), "b", {"maxrregcount=16"});
  }
  cache::Storage storage(dir.path());
  auto found = storage.find_module(module, ctx, rules());
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  ASSERT_EQ(storage.refusals().size(), 1u);
  EXPECT_NE(storage.refusals()[0].find("merged kernel entries"), std::string::npos);
}

// A record whose own fields say it was made for another target, ptxas or
// set of flags than its key (mislabelled in a pack or on a team server) is
// refused by the one entry check, never applied.
TEST(Storage, a_record_filed_under_the_wrong_key_is_refused) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  auto stored = [&](const char* target, const char* ptxas, const char* flags) {
    auto store = cache::Store::open_for_writing(dir.path()).value();
    cache::Record r;
    r.kind = cache::RecordKind::module;
    r.target = target;
    r.ptxas = ptxas;
    r.flags = flags;
    r.controls.space = "ptxas-13";
    EXPECT_TRUE(spaces::add_assignment(r.controls, "maxrregcount=64").ok());
    EXPECT_TRUE(cache::write_entries(store, std::vector<cache::Entry>{{cache::module_key(module, ctx), r}}).ok());
  };
  auto lookup = [&](std::string* refusal) {
    auto r = rules();
    r.key_fields = cache::EntryRules::KeyFields{"sm_90a", "13.0.88", ""};
    cache::Storage storage(dir.path());
    auto found = storage.find_module(module, ctx, r);
    EXPECT_TRUE(found.ok());
    *refusal = storage.refusals().empty() ? "" : storage.refusals().back();
    return found.ok() && found->has_value();
  };
  std::string why;
  stored("sm_90a", "13.0.88", "");
  EXPECT_TRUE(lookup(&why));
  stored("sm_80", "13.0.88", "");
  EXPECT_FALSE(lookup(&why));
  EXPECT_NE(why.find("it says target = 'sm_80', its key is for 'sm_90a' (filed under the wrong key)"), std::string::npos) << why;
  stored("sm_90a", "12.8.93", "");
  EXPECT_FALSE(lookup(&why));
  EXPECT_NE(why.find("ptxas = '12.8.93'"), std::string::npos) << why;
  stored("sm_90a", "13.0.88", "opt-level=1");
  EXPECT_FALSE(lookup(&why));
  EXPECT_NE(why.find("flags = 'opt-level=1'"), std::string::npos) << why;
}

// A pack is a tier after the cache: consulted on a local miss, its
// index built once; a pack that cannot be read is dead for the process.
TEST(Storage, packs_answer_local_misses_and_a_broken_pack_is_skipped) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  cache::Record r;
  r.kind = cache::RecordKind::module;
  r.controls.space = "ptxas-13";
  r.controls.options["opt-level"] = "1";
  cache::Pack pack;
  pack.entries.emplace(cache::module_key(module, ctx), cache::format_record(r));
  std::string pack_file = join_path(dir.path(), "team.ciqpack");
  ASSERT_TRUE(write_file_atomic(pack_file, cache::format_pack(pack)).ok());
  ASSERT_TRUE(write_file_atomic(join_path(dir.path(), "bad.ciqpack"), "not a pack\n").ok());
  ::setenv("CIQ_PACKS", (join_path(dir.path(), "bad.ciqpack") + ":" + pack_file).c_str(), 1);
  ::unsetenv("CIQ_REMOTE");
  auto storage = cache::Storage::from_environment(join_path(dir.path(), "cache"));
  ::unsetenv("CIQ_PACKS");
  EXPECT_TRUE(storage.anything_to_read());
  for (int i = 0; i < 2; ++i) {
    auto found = storage.find_module(module, ctx, rules());
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->tier, cache::Tier::pack);
    EXPECT_EQ((*found)->controls.options.at("opt-level"), "1");
  }
  cache::Tally tally(cache::Tool::ptxas);
  cache::count_events(storage, tally);
  // The broken pack failed once, then was not asked again.
  EXPECT_EQ(tally.names(), (std::vector<std::string>{"pack-refused", "pack-hit", "pack-hit"}));
}

TEST(Lookup, target_kernels_by_glob) {
  auto module = cache::scan_ptx(k_two);
  spaces::ControlSet s;
  ASSERT_TRUE(spaces::add_assignment(s, "maxrregcount=64").ok());
  ASSERT_TRUE(spaces::add_assignment(s, "a:maxnreg=32").ok());
  ASSERT_TRUE(spaces::add_assignment(s, "b:maxnreg=40").ok());
  auto only_b = target_kernels(s, module, "b");
  EXPECT_EQ(only_b.options.size(), 1u);
  EXPECT_EQ(only_b.kernels.size(), 1u);
  EXPECT_TRUE(only_b.kernels.count("b"));
  EXPECT_TRUE(target_kernels(s, module, "zzz").empty());
  EXPECT_EQ(target_kernels(s, module, ""), s);
}
