#include "cache/record.h"
#include "cache/store.h"
#include "utils/files.h"
#include "wrapper/lookup.h"
#include "wrapper/nvcc_wrapper.h"
#include "wrapper/resources.h"

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

void put(cache::Store& store, const Hash128& key, const std::string& kernel, std::initializer_list<const char*> sets) {
  cache::Record r;
  r.kind = kernel.empty() ? "module" : "kernel";
  r.kernel = kernel;
  r.controls.space = "ptxas-13";
  for (auto s : sets) ASSERT_TRUE(spaces::add_assignment(r.controls, s).ok());
  ASSERT_TRUE(store.put(cache::Table::records, std::string(reinterpret_cast<const char*>(key.data()), 16),
                        cache::format_record(r))
                  .ok());
}
} // namespace

TEST(Lookup, module_key_wins_then_kernel_keys_merge) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto store = cache::Store::open_for_writing(dir.path()).value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};

  auto miss = lookup_controls(store, module, ctx);
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());

  put(store, cache::kernel_key(module, "a", ctx), "a", {"maxrregcount=64", "a:maxnreg=32", "b:maxnreg=99"});
  put(store, cache::kernel_key(module, "b", ctx), "b", {"maxrregcount=64", "b:maxnreg=40"});
  auto merged = lookup_controls(store, module, ctx);
  ASSERT_TRUE(merged.ok() && merged->has_value());
  EXPECT_EQ((*merged)->matched, "kernel");
  EXPECT_EQ((*merged)->keys.size(), 2u);
  EXPECT_EQ((*merged)->controls.options.at("maxrregcount"), "64");
  EXPECT_EQ((*merged)->controls.kernels.at("a").at("maxnreg"), "32");
  EXPECT_EQ((*merged)->controls.kernels.at("b").at("maxnreg"), "40"); // a's record does not speak for b

  put(store, cache::module_key(module, ctx), "", {"maxrregcount=128"});
  auto whole = lookup_controls(store, module, ctx);
  EXPECT_EQ((*whole)->matched, "module");
  EXPECT_EQ((*whole)->controls.options.at("maxrregcount"), "128");
  EXPECT_TRUE((*whole)->controls.kernels.empty());
}

TEST(Lookup, disagreeing_kernel_options_are_dropped_and_quarantine_is_a_miss) {
  auto dir = ScratchDir::create("ciq-lookup").value();
  auto store = cache::Store::open_for_writing(dir.path()).value();
  auto module = cache::scan_ptx(k_two);
  cache::KeyContext ctx{"sm_90a", "id", ""};
  put(store, cache::kernel_key(module, "a", ctx), "a", {"maxrregcount=64", "opt-level=2"});
  put(store, cache::kernel_key(module, "b", ctx), "b", {"maxrregcount=96", "opt-level=2"});
  auto merged = lookup_controls(store, module, ctx);
  ASSERT_TRUE(merged.ok() && merged->has_value());
  EXPECT_FALSE((*merged)->controls.options.count("maxrregcount"));
  EXPECT_EQ((*merged)->controls.options.at("opt-level"), "2");

  for (const char* k : {"a", "b"}) {
    Hash128 key = cache::kernel_key(module, k, ctx);
    ASSERT_TRUE(store.put(cache::Table::quarantine, std::string(reinterpret_cast<const char*>(key.data()), 16), "x").ok());
  }
  auto none = lookup_controls(store, module, ctx);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
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
