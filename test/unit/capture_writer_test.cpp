#include "tuner/inject/capture_writer.h"
#include "tuner/formats/capture.h"
#include "tuner/formats/capture_lines.h"
#include "utils/files.h"
#include "utils/hash.h"

#include <cstring>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ciq;
using namespace ciq::inject;

namespace {

/// Allocations of a made-up device: base -> size; anything else is a scalar.
FindAllocation device_with(std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges, std::uint64_t managed_base = 0) {
  return [ranges, managed_base](std::uint64_t value) -> std::optional<AllocationFound> {
    for (auto [base, size] : ranges)
      if (value >= base && value - base < size)
        return AllocationFound{base, size, base == managed_base ? "managed memory" : ""};
    return std::nullopt;
  };
}

std::vector<std::uint8_t> buffer_of(const std::vector<std::uint64_t>& words) {
  std::vector<std::uint8_t> bytes(words.size() * 8);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

} // namespace

TEST(CaptureWriter, assembles_the_parameter_buffer_from_kernel_params_at_the_layouts_offsets) {
  // (int n, float v, float* out, char c, double scale): packed where the
  // ABI packs them, padding after c.
  std::vector<ParamSlot> layout = {{0, 4}, {4, 4}, {8, 8}, {16, 1}, {24, 8}};
  std::int32_t n = 1000;
  float v = 2.5f;
  std::uint64_t out = 0x7e0000001000;
  char c = 'x';
  double scale = 0.5;
  void* params[] = {&n, &v, &out, &c, &scale};
  auto bytes = params_from_pointers(layout, params);
  ASSERT_TRUE(bytes);
  ASSERT_EQ(bytes->size(), 32u);
  std::int32_t n_read = 0;
  float v_read = 0;
  std::uint64_t out_read = 0;
  double scale_read = 0;
  std::memcpy(&n_read, bytes->data(), 4);
  std::memcpy(&v_read, bytes->data() + 4, 4);
  std::memcpy(&out_read, bytes->data() + 8, 8);
  std::memcpy(&scale_read, bytes->data() + 24, 8);
  EXPECT_EQ(n_read, 1000);
  EXPECT_EQ(v_read, 2.5f);
  EXPECT_EQ(out_read, out);
  EXPECT_EQ((*bytes)[16], 'x');
  EXPECT_EQ(scale_read, 0.5);
  for (int i = 17; i < 24; ++i) EXPECT_EQ((*bytes)[i], 0) << i;  // padding is zero, not whatever the stack held

  EXPECT_FALSE(params_from_pointers(layout, nullptr));
  void* holed[] = {&n, &v, nullptr, &c, &scale};
  EXPECT_FALSE(params_from_pointers(layout, holed));
  auto none = params_from_pointers({}, nullptr);  // a kernel without parameters
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(CaptureWriter, takes_the_buffer_passed_in_extra_cut_to_the_layout) {
  std::vector<ParamSlot> layout = {{0, 8}, {8, 4}};
  std::uint8_t buffer[16];
  for (int i = 0; i < 16; ++i) buffer[i] = std::uint8_t(i);
  std::size_t size = sizeof buffer;
  void* extra[] = {reinterpret_cast<void*>(1), buffer, reinterpret_cast<void*>(2), &size, nullptr};
  std::string why;
  auto bytes = params_from_extra(layout, extra, why);
  ASSERT_TRUE(bytes) << why;
  EXPECT_EQ(*bytes, std::vector<std::uint8_t>(buffer, buffer + 12));

  std::size_t short_size = 10;
  void* too_short[] = {reinterpret_cast<void*>(1), buffer, reinterpret_cast<void*>(2), &short_size, nullptr};
  EXPECT_FALSE(params_from_extra(layout, too_short, why));
  EXPECT_EQ(why, "the parameter buffer passed in `extra` holds 10 bytes; the kernel's parameters need 12");
  void* no_size[] = {reinterpret_cast<void*>(1), buffer, nullptr};
  EXPECT_FALSE(params_from_extra(layout, no_size, why));
  EXPECT_NE(why.find("neither in kernelParams nor"), std::string::npos);
  EXPECT_FALSE(params_from_extra(layout, nullptr, why));
}

TEST(CaptureWriter, finds_each_allocation_once_with_every_pointer_into_it) {
  // (in, in + 256, n, out): two pointers into one allocation, a scalar that
  // is no address, a second allocation.
  std::vector<ParamSlot> layout = {{0, 8}, {8, 8}, {16, 8}, {24, 8}};
  auto params = buffer_of({0x1000, 0x1100, 1 << 22, 0x9010});
  auto memory = find_launch_memory(layout, params, device_with({{0x1000, 0x800}, {0x9000, 0x100}}));
  EXPECT_EQ(memory.refusal, "");
  ASSERT_EQ(memory.allocations.size(), 2u);
  EXPECT_EQ(memory.allocations[0].base, 0x1000u);
  EXPECT_EQ(memory.allocations[1].base, 0x9000u);
  EXPECT_EQ(memory.bytes, 0x900u);
  ASSERT_EQ(memory.pointers.size(), 3u);
  EXPECT_EQ(memory.pointers[0].param, 0u);
  EXPECT_EQ(memory.pointers[1].param, 1u);
  EXPECT_EQ(memory.pointers[1].allocation, 0u);
  EXPECT_EQ(memory.pointers[1].offset, 0x100u);
  EXPECT_EQ(memory.pointers[2].param, 3u);
  EXPECT_EQ(memory.pointers[2].allocation, 1u);
  EXPECT_EQ(memory.pointers[2].offset, 0x10u);
}

TEST(CaptureWriter, refuses_a_pointer_inside_a_structure_and_memory_the_driver_refuses) {
  // (int n, struct {float* data; long len;}) : the struct at 8, 16 bytes.
  std::vector<ParamSlot> layout = {{0, 4}, {8, 16}};
  auto params = buffer_of({7, 0x1040, 64});
  auto memory = find_launch_memory(layout, params, device_with({{0x1000, 0x100}}));
  EXPECT_EQ(memory.refusal,
            "a pointer inside a structure parameter (param 1, 16 bytes, at byte 0): its allocation cannot be relocated on replay");
  // The same structure holding no address is plain data.
  auto plain = find_launch_memory(layout, buffer_of({7, 0x5000, 64}), device_with({{0x1000, 0x100}}));
  EXPECT_EQ(plain.refusal, "");
  EXPECT_TRUE(plain.allocations.empty());

  auto managed = find_launch_memory({{0, 8}}, buffer_of({0x2008}), device_with({{0x2000, 0x100}}, 0x2000));
  EXPECT_EQ(managed.refusal, "managed memory (param 0)");
  // A layout that runs past the buffer is refused, never read.
  EXPECT_NE(find_launch_memory({{0, 8}, {8, 8}}, buffer_of({1}), device_with({})).refusal, "");
}

TEST(CaptureWriter, streams_the_same_digest_as_hashing_the_whole) {
  std::string bytes(100000, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 31);
  StreamDigest digest;
  for (std::size_t at = 0; at < bytes.size(); at += 4096) digest.add(bytes.data() + at, std::min<std::size_t>(4096, bytes.size() - at));
  EXPECT_EQ(digest.hex(), to_hex(xxh128(bytes)));
}

TEST(CaptureWriter, parses_its_settings_and_names_the_variable_at_fault) {
  CaptureSettings settings;
  std::string why;
  ASSERT_TRUE(parse_capture_settings("_Z3addPfS_i,,kernel_b", "64M", "2", settings, why)) << why;
  EXPECT_EQ(settings.kernels, (std::set<std::string, std::less<>>{"_Z3addPfS_i", "kernel_b"}));
  EXPECT_EQ(settings.max_bytes, std::uint64_t(64) << 20);
  EXPECT_EQ(settings.max_configs, 2u);
  ASSERT_TRUE(parse_capture_settings("", nullptr, nullptr, settings, why));
  EXPECT_TRUE(settings.kernels.empty());
  EXPECT_EQ(settings.max_bytes, std::uint64_t(4) << 30);
  EXPECT_EQ(settings.max_configs, 4u);

  EXPECT_FALSE(parse_capture_settings(nullptr, nullptr, nullptr, settings, why));
  EXPECT_NE(why.find("CIQ_CAPTURE_KERNELS is not set"), std::string::npos);
  EXPECT_FALSE(parse_capture_settings("k", "4 GiB", nullptr, settings, why));
  EXPECT_EQ(why, "CIQ_CAPTURE_MAX_BYTES=4 GiB is not a size (bytes, or a number with K, M, G or T)");
  EXPECT_FALSE(parse_capture_settings("k", nullptr, "0", settings, why));
  EXPECT_EQ(why, "CIQ_CAPTURE_CONFIGS=0 is not a positive whole number");
}

TEST(CaptureWriter, offers_the_first_launch_of_each_configuration_up_to_the_cap) {
  CaptureSettings settings;
  settings.kernels = {"k"};
  settings.max_configs = 2;
  CaptureTable table(settings);
  EXPECT_TRUE(table.wanted("k"));
  EXPECT_FALSE(table.wanted("other"));
  LaunchConfig a{{1, 1, 1}, {32, 1, 1}, 0}, b{{2, 1, 1}, {32, 1, 1}, 0}, c{{3, 1, 1}, {32, 1, 1}, 0},
      d{{4, 1, 1}, {32, 1, 1}, 0};
  EXPECT_EQ(table.count_launch("k", a), CaptureTable::Offer::capture);
  EXPECT_EQ(table.count_launch("k", a), CaptureTable::Offer::counted);
  table.captured("k", a, "1-0");
  EXPECT_EQ(table.count_launch("k", b), CaptureTable::Offer::capture);
  table.refused("k", b, "managed memory (param 0)");  // a refusal keeps no slot
  EXPECT_EQ(table.count_launch("k", c), CaptureTable::Offer::capture);
  table.captured("k", c, "1-1");
  EXPECT_EQ(table.count_launch("k", d), CaptureTable::Offer::refused);
  table.count_refused("k", a, "never used: a was decided");
  EXPECT_EQ(table.entry("k", a)->launches, 3u);
  EXPECT_EQ(table.entry("k", a)->captured, "1-0");
  EXPECT_EQ(table.entry("k", a)->refused, "");
  EXPECT_EQ(table.entry("k", d)->refused, "2 configurations of this kernel are captured already (CIQ_CAPTURE_CONFIGS=2)");
  ASSERT_EQ(table.captures().size(), 2u);
  EXPECT_EQ(table.captures()[1].name, "1-1");
}

TEST(CaptureWriter, writes_what_the_capture_reader_reads_back) {
  auto scratch = ScratchDir::create("ciq-capture-test");
  ASSERT_TRUE(scratch);
  std::string root = scratch->path(), dir = root + "/42-0";
  ASSERT_TRUE(make_dirs(dir));
  LaunchRecord r;
  r.kernel = "_Z3addPfS_i";
  r.pid = 42;
  r.exe = "/bin/app";
  r.device = 1;
  r.device_name = "NVIDIA H100 80GB HBM3";
  r.compute_capability = {9, 0};
  r.config = {{128, 2, 1}, {256, 1, 1}, 1024};
  r.launch_api = "cuLaunchKernelEx";
  r.params = {{0, 8}, {8, 8}, {16, 4}};
  std::uint64_t high = 0x7f1234567000ULL;  // above 2^32 and 2^53 / 2^11: all 64 bits kept
  r.param_bytes = buffer_of({high + 16, 0xfffffff000000000ULL, 77});
  r.param_bytes.resize(20);
  r.memory.allocations = {{high, 64}, {0xfffffff000000000ULL, 32}};
  r.memory.pointers = {{0, 0, 16}, {1, 1, 0}};
  r.before_xxh128 = {"00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100"};
  r.after_xxh128 = {"0123456789abcdef0123456789abcdef", "ffeeddccbbaa99887766554433221100"};
  r.config_launches = 12;
  ASSERT_TRUE(write_file_atomic(dir + "/" + memory_file_name(0), std::string(64, 'a')));
  ASSERT_TRUE(write_file_atomic(dir + "/" + memory_file_name(1), std::string(32, 'b')));
  // Byte for byte what the writer wrote before the format had one owner
  // (tuner/formats/capture_lines.h): one-space indentation, members in the
  // documented order, addresses as "0x..." text.
  std::string text = render_launch(r);
  EXPECT_EQ(text.rfind("{\n \"ciq_capture\": 1,\n \"kernel\": \"_Z3addPfS_i\",\n \"pid\": 42,\n", 0), 0u) << text;
  EXPECT_EQ(nlohmann::ordered_json::parse(text).dump(),
            "{\"ciq_capture\":1,\"kernel\":\"_Z3addPfS_i\",\"pid\":42,\"exe\":\"/bin/app\",\"device\":1,\"device_name\":\"N"
            "VIDIA H100 80GB HBM3\",\"compute_capability\":[9,0],\"grid\":[128,2,1],\"block\":[256,1,1],\"dynamic_smem\":10"
            "24,\"launch_api\":\"cuLaunchKernelEx\",\"code_xxh128\":\"\",\"params\":[{\"offset\":0,\"size\":8},{\"offset\":"
            "8,\"size\":8},{\"offset\":16,\"size\":4}],\"param_bytes\":\"10705634127f000000000000f0ffffff4d000000\",\"point"
            "ers\":[{\"param\":0,\"allocation\":0,\"offset\":16},{\"param\":1,\"allocation\":1,\"offset\":0}],\"allocations"
            "\":[{\"base\":\"0x7f1234567000\",\"size\":64,\"file\":\"mem-0.bin\",\"before_xxh128\":\"00112233445566778899aa"
            "bbccddeeff\",\"after_xxh128\":\"0123456789abcdef0123456789abcdef\"},{\"base\":\"0xfffffff000000000\",\"size\":"
            "32,\"file\":\"mem-1.bin\",\"before_xxh128\":\"ffeeddccbbaa99887766554433221100\",\"after_xxh128\":\"ffeeddccbb"
            "aa99887766554433221100\"}],\"config_launches\":12}");
  ASSERT_TRUE(write_file_atomic(dir + "/launch.json", render_launch(r)));

  CaptureSettings settings;
  settings.kernels = {r.kernel};
  CaptureTable table(settings);
  for (int i = 0; i < 12; ++i) table.count_launch(r.kernel, r.config);
  table.captured(r.kernel, r.config, "42-0");
  LaunchConfig other{{1, 1, 1}, {32, 1, 1}, 0};
  table.count_launch(r.kernel, other);
  table.refused(r.kernel, other, "a pointer inside a structure parameter (param 2)");
  table.count_graph_launch();
  // Byte for byte what the writer wrote before the format had one owner
  // (tuner/formats/capture_lines.h).
  EXPECT_EQ(table.render_index(42, "/bin/app", "ok", ""),
            "{\"ciq_capture_index\":1,\"pid\":42,\"exe\":\"/bin/app\",\"status\":\"ok\",\"reason\":\"\",\"untracked_launches\":0,\"graph_launches\":1}\n"
            "{\"kernel\":\"_Z3addPfS_i\",\"grid\":[1,1,1],\"block\":[32,1,1],\"dynamic_smem\":0,\"launches\":1,\"captured\":\"\",\"refused\":\"a pointer inside a structure parameter (param 2)\"}\n"
            "{\"kernel\":\"_Z3addPfS_i\",\"grid\":[128,2,1],\"block\":[256,1,1],\"dynamic_smem\":1024,\"launches\":12,\"captured\":\"42-0\",\"refused\":\"\"}\n");
  ASSERT_TRUE(write_file_atomic(root + "/index-42.jsonl", table.render_index(42, "/bin/app", "ok", "")));

  auto set = formats::read_capture_set(root);
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_TRUE(set->problems.empty()) << set->problems[0];
  ASSERT_EQ(set->captures.size(), 1u);
  const formats::Capture& c = set->captures[0];
  EXPECT_EQ(c.kernel, r.kernel);
  EXPECT_EQ(c.pid, 42);
  EXPECT_EQ(c.exe, "/bin/app");
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.compute_capability, (std::array<int, 2>{9, 0}));
  EXPECT_EQ(c.grid, (std::array<std::uint32_t, 3>{128, 2, 1}));
  EXPECT_EQ(c.block, (std::array<std::uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(c.dynamic_smem, 1024u);
  EXPECT_EQ(c.launch_api, "cuLaunchKernelEx");
  ASSERT_EQ(c.params.size(), 3u);
  EXPECT_EQ(c.params[2].offset, 16u);
  EXPECT_EQ(c.params[2].size, 4u);
  EXPECT_EQ(c.param_bytes, r.param_bytes);
  ASSERT_EQ(c.pointers.size(), 2u);
  EXPECT_EQ(c.pointers[0].offset, 16u);
  EXPECT_EQ(c.pointers[1].allocation, 1u);
  ASSERT_EQ(c.allocations.size(), 2u);
  EXPECT_EQ(c.allocations[0].base, high);
  EXPECT_EQ(c.allocations[1].base, 0xfffffff000000000ULL);
  EXPECT_EQ(c.allocations[0].file, c.dir + "/mem-0.bin");
  EXPECT_EQ(c.allocations[0].before_xxh128, r.before_xxh128[0]);
  EXPECT_EQ(c.allocations[0].after_xxh128, r.after_xxh128[0]);
  EXPECT_EQ(c.config_launches, 12u);
  EXPECT_EQ(c.bytes(), 96u);

  ASSERT_EQ(set->indexes.size(), 1u);
  const formats::CaptureIndex& index = set->indexes[0];
  EXPECT_EQ(index.pid, 42);
  EXPECT_EQ(index.status, "ok");
  ASSERT_EQ(index.entries.size(), 2u);
  EXPECT_EQ(index.entries[0].grid, (std::array<std::uint32_t, 3>{1, 1, 1}));  // sorted by configuration
  EXPECT_EQ(index.entries[0].launches, 1u);
  EXPECT_EQ(index.entries[0].captured, "");
  EXPECT_EQ(index.entries[0].refused, "a pointer inside a structure parameter (param 2)");
  EXPECT_EQ(index.entries[1].launches, 12u);
  EXPECT_EQ(index.entries[1].captured, "42-0");
  EXPECT_EQ(index.entries[1].dynamic_smem, 1024u);
}

// The index's first line names its version: one the reader does not know
// is skipped whole and said, not read as if it were version 1.
TEST(CaptureWriter, an_index_of_another_version_is_skipped) {
  auto scratch = ScratchDir::create("ciq-capture-test");
  ASSERT_TRUE(scratch);
  std::string root = scratch->path();
  formats::CaptureIndex index;
  index.pid = 7;
  index.status = "ok";
  index.graph_launches = 3;
  index.entries.push_back({"k", {1, 1, 1}, {32, 1, 1}, 0, 5, "", "why not"});
  std::string text = formats::capture_index_text(index);
  ASSERT_TRUE(write_file_atomic(root + "/index-7.jsonl", text));
  auto set = formats::read_capture_set(root);
  ASSERT_TRUE(set) << set.error().message;
  ASSERT_EQ(set->indexes.size(), 1u);
  EXPECT_EQ(set->indexes[0].graph_launches, 3u);
  ASSERT_EQ(set->indexes[0].entries.size(), 1u);
  EXPECT_EQ(set->indexes[0].entries[0].refused, "why not");

  text.replace(text.find("\"ciq_capture_index\":1"), 21, "\"ciq_capture_index\":2");
  ASSERT_TRUE(write_file_atomic(root + "/index-7.jsonl", text));
  set = formats::read_capture_set(root);
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_TRUE(set->indexes.empty());
  ASSERT_EQ(set->problems.size(), 1u);
  EXPECT_NE(set->problems[0].find("capture index version 2 is not 1; file skipped"), std::string::npos) << set->problems[0];
}
