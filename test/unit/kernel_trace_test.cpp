#include "tuner/inject/kernel_table.h"
#include "utils/elf.h"
#include "tuner/formats/kernel_trace.h"
#include "utils/files.h"

#include <cstring>
#include <elf.h>
#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::formats;

namespace {

/// A minimal ELF64 image holding the named sections (and a section name
/// table), the way ptxas lays out a cubin's `.text.<kernel>` sections.
std::string make_elf(const std::vector<std::pair<std::string, std::string>>& sections) {
  std::string names(1, '\0'), data;
  std::vector<Elf64_Shdr> headers(1);  // [0]: the null section
  for (const auto& [name, bytes] : sections) {
    Elf64_Shdr h{};
    h.sh_name = Elf64_Word(names.size());
    h.sh_type = SHT_PROGBITS;
    h.sh_offset = sizeof(Elf64_Ehdr) + data.size();
    h.sh_size = bytes.size();
    names += name + '\0';
    data += bytes;
    headers.push_back(h);
  }
  Elf64_Shdr strtab{};
  strtab.sh_name = Elf64_Word(names.size());
  names += std::string(".shstrtab") + '\0';
  strtab.sh_type = SHT_STRTAB;
  strtab.sh_offset = sizeof(Elf64_Ehdr) + data.size();
  strtab.sh_size = names.size();
  data += names;
  headers.push_back(strtab);
  Elf64_Ehdr file{};
  std::memcpy(file.e_ident, ELFMAG, SELFMAG);
  file.e_ident[EI_CLASS] = ELFCLASS64;
  file.e_ident[EI_DATA] = ELFDATA2LSB;
  file.e_shoff = sizeof(Elf64_Ehdr) + data.size();
  file.e_shentsize = sizeof(Elf64_Shdr);
  file.e_shnum = Elf64_Half(headers.size());
  file.e_shstrndx = Elf64_Half(headers.size() - 1);
  std::string image(reinterpret_cast<const char*>(&file), sizeof file);
  image += data;
  for (const auto& h : headers) image.append(reinterpret_cast<const char*>(&h), sizeof h);
  return image;
}

// Two processes of one run: a timed one and one that had no CUPTI.
const char* timed_process =
    R"T({"ciq_kernel_trace": 1, "pid": 100, "exe": "/bin/app", "status": "ok", "reason": "", "dropped_launches": 1, "dropped_records": 2, "module_identity": "ok"}
{"module": 3, "image": "elf", "bytes": 4096, "xxh128": "00112233445566778899aabbccddeeff", "kernels": 2}
{"kernel": "_Z4stepPf", "demangled": "step(float*)", "device": 0, "grid": [64, 1, 1], "block": [256, 1, 1], "dynamic_smem": 0, "static_smem": 1024, "registers": 40, "local_bytes": 0, "launches": 4, "total_ns": 1000, "min_ns": 100, "max_ns": 400, "first_start_ns": 1700000000000000001, "last_end_ns": 1700000000000009999, "durations_ns": [100, 400, 300, 200], "code_xxh128": "ffeeddccbbaa99887766554433221100", "module": 3}
{"kernel": "_Z4stepPf", "demangled": "step(float*)", "device": 0, "grid": [128, 1, 1], "block": [256, 1, 1], "dynamic_smem": 0, "static_smem": 1024, "registers": 40, "local_bytes": 0, "launches": 2, "total_ns": 2000, "min_ns": 900, "max_ns": 1100, "first_start_ns": 5, "last_end_ns": 9, "durations_ns": [900, 1100], "code_xxh128": "ffeeddccbbaa99887766554433221100", "module": 3}
{"kernel": "_Z4tinyv", "demangled": "tiny()", "device": 0, "grid": [1, 1, 1], "block": [32, 1, 1], "dynamic_smem": 128, "static_smem": 0, "registers": 8, "local_bytes": 0, "launches": 3, "total_ns": 30, "min_ns": 10, "max_ns": 10, "first_start_ns": 1, "last_end_ns": 2, "durations_ns": [10, 10], "code_xxh128": "", "module": -1}
)T";
const char* second_process =
    R"T({"ciq_kernel_trace": 1, "pid": 101, "exe": "/bin/app", "status": "ok", "reason": ""}
{"kernel": "_Z4stepPf", "demangled": "step(float*)", "device": 0, "grid": [64, 1, 1], "block": [256, 1, 1], "dynamic_smem": 0, "static_smem": 1024, "registers": 40, "local_bytes": 0, "launches": 1, "total_ns": 970, "min_ns": 970, "max_ns": 970, "first_start_ns": 1, "last_end_ns": 2, "durations_ns": [970], "code_xxh128": "ffeeddccbbaa99887766554433221100", "module": 1}
)T";
const char* no_cupti_process =
    R"T({"ciq_kernel_trace": 1, "pid": 102, "exe": "/bin/app", "status": "no-cupti", "reason": "libcupti.so.13: cannot open shared object file"}
)T";

} // namespace

TEST(KernelTrace, reads_a_recorded_trace) {
  KernelTrace trace;
  add_kernel_trace_text(trace, timed_process, "kernels-100.jsonl");
  summarise_kernels(trace);
  ASSERT_EQ(trace.processes.size(), 1u);
  EXPECT_EQ(trace.processes[0].pid, 100);
  EXPECT_EQ(trace.processes[0].exe, "/bin/app");
  EXPECT_TRUE(trace.processes[0].timed());
  EXPECT_EQ(trace.processes[0].dropped_launches, 1u);
  EXPECT_EQ(trace.processes[0].dropped_records, 2u);
  ASSERT_EQ(trace.modules.size(), 1u);
  EXPECT_EQ(trace.modules[0].id, 3);
  EXPECT_EQ(trace.modules[0].image, "elf");
  ASSERT_EQ(trace.records.size(), 3u);
  // Nanosecond timestamps keep all 64 bits (a double would round them).
  EXPECT_EQ(trace.records[0].first_start_ns, 1700000000000000001u);
  EXPECT_EQ(trace.records[0].config.grid, (std::array<std::uint32_t, 3>{64, 1, 1}));
  EXPECT_TRUE(trace.problems.empty());
  EXPECT_TRUE(trace.timed());
  EXPECT_EQ(trace.no_timing_reason(), "");

  // Per kernel: both configurations together, largest first.
  EXPECT_EQ(trace.total_ns, 3030u);
  ASSERT_EQ(trace.kernels.size(), 2u);
  const KernelSummary& step = trace.kernels[0];
  EXPECT_EQ(step.kernel, "_Z4stepPf");
  EXPECT_EQ(step.demangled, "step(float*)");
  EXPECT_EQ(step.stats.launches, 6u);
  EXPECT_EQ(step.stats.total_ns, 3000u);
  EXPECT_EQ(step.stats.min_ns, 100u);
  EXPECT_EQ(step.stats.max_ns, 1100u);
  EXPECT_DOUBLE_EQ(step.stats.median_ns, 350);  // of 100 400 300 200 900 1100
  EXPECT_NEAR(step.share, 3000.0 / 3030.0, 1e-12);
  EXPECT_EQ(step.code_xxh128, std::vector<std::string>{"ffeeddccbbaa99887766554433221100"});
  ASSERT_EQ(step.configs.size(), 2u);
  EXPECT_EQ(step.configs[0].config.grid[0], 128u);  // 2000 ns before 1000 ns
  EXPECT_DOUBLE_EQ(step.configs[0].stats.median_ns, 1000);
  EXPECT_EQ(step.configs[0].registers, 40u);
  // A kernel whose launches were not all recorded: the median is of those
  // recorded, the totals of all.
  const KernelSummary& tiny = trace.kernels[1];
  EXPECT_EQ(tiny.stats.launches, 3u);
  EXPECT_EQ(tiny.stats.recorded, 2u);
  EXPECT_DOUBLE_EQ(tiny.stats.median_ns, 10);
  EXPECT_TRUE(tiny.code_xxh128.empty());
}

TEST(KernelTrace, merges_the_processes_of_one_run_and_keeps_their_statuses) {
  auto dir = ScratchDir::create("ciq-kernel-trace");
  ASSERT_TRUE(dir);
  ASSERT_TRUE(write_file_atomic(join_path(dir->path(), "kernels-100.jsonl"), timed_process));
  ASSERT_TRUE(write_file_atomic(join_path(dir->path(), "kernels-101.jsonl"), second_process));
  ASSERT_TRUE(write_file_atomic(join_path(dir->path(), "kernels-102.jsonl"), no_cupti_process));
  ASSERT_TRUE(write_file_atomic(join_path(dir->path(), ".kernels-103.tmp"), "{garbage"));  // a writer's temporary
  ASSERT_TRUE(write_file_atomic(join_path(dir->path(), "notes.txt"), "not a trace"));
  auto trace = read_kernel_trace(dir->path());
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->processes.size(), 3u);
  EXPECT_EQ(trace->processes[2].status, "no-cupti");
  EXPECT_EQ(trace->processes[2].reason, "libcupti.so.13: cannot open shared object file");
  EXPECT_TRUE(trace->timed());
  EXPECT_TRUE(trace->problems.empty());
  const KernelSummary& step = trace->kernels[0];
  EXPECT_EQ(step.stats.launches, 7u);
  EXPECT_EQ(step.stats.total_ns, 3970u);
  EXPECT_EQ(step.processes, 2u);
  EXPECT_EQ(step.durations_ns.size(), 7u);
  EXPECT_DOUBLE_EQ(step.stats.median_ns, 400);  // 100 200 300 400 900 970 1100
  // The same configuration in two processes is one configuration.
  ASSERT_EQ(step.configs.size(), 2u);
  EXPECT_EQ(step.configs[0].config.grid[0], 128u);
  EXPECT_EQ(step.configs[1].stats.launches, 5u);
  EXPECT_DOUBLE_EQ(step.configs[1].stats.median_ns, 300);
  EXPECT_NEAR(step.share, 3970.0 / 4000.0, 1e-12);
}

TEST(KernelTrace, says_why_there_is_no_timing) {
  auto dir = ScratchDir::create("ciq-kernel-trace");
  ASSERT_TRUE(dir);
  auto empty = read_kernel_trace(dir->path());
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->processes.empty());
  EXPECT_FALSE(empty->timed());
  EXPECT_NE(empty->no_timing_reason().find("no process wrote a kernel trace"), std::string::npos);

  ASSERT_TRUE(write_file_atomic(join_path(dir->path(), "kernels-102.jsonl"), no_cupti_process));
  ASSERT_TRUE(write_file_atomic(join_path(dir->path(), "kernels-104.jsonl"), no_cupti_process));
  auto trace = read_kernel_trace(dir->path());
  ASSERT_TRUE(trace);
  EXPECT_FALSE(trace->timed());
  // Two processes, one reason: said once.
  EXPECT_EQ(trace->no_timing_reason(), "no-cupti: libcupti.so.13: cannot open shared object file");

  EXPECT_FALSE(read_kernel_trace(join_path(dir->path(), "missing")));
}

TEST(KernelTrace, malformed_lines_are_reported_with_file_and_line_and_skipped) {
  std::string text = std::string(timed_process);
  text.insert(text.find("{\"kernel\": \"_Z4tinyv\""), "this is not json\n{\"kernel\": \"_Z1xv\", \"grid\": [1, 1], \"block\": [1, 1, 1]}\n");
  text += R"T({"kernel": "_Z4stepPf", "demangled": "step(float*)", "device": 0, "grid": [64, 1, 1], "block": [256, 1, 1], "launches": 1, "total_ns": 5, "durat)T";
  KernelTrace trace;
  add_kernel_trace_text(trace, text, "run/kernels-100.jsonl");
  summarise_kernels(trace);
  ASSERT_EQ(trace.problems.size(), 3u);
  EXPECT_EQ(trace.problems[0].where, "run/kernels-100.jsonl:5");
  EXPECT_EQ(trace.problems[0].message, "not a JSON object; skipped");
  EXPECT_EQ(trace.problems[1].where, "run/kernels-100.jsonl:6");
  EXPECT_NE(trace.problems[1].message.find("grid and block must be [x, y, z]"), std::string::npos);
  EXPECT_EQ(trace.problems[2].where, "run/kernels-100.jsonl:8");
  EXPECT_NE(trace.problems[2].message.find("truncated last line"), std::string::npos);
  // The good lines are all there.
  EXPECT_EQ(trace.records.size(), 3u);
  EXPECT_EQ(trace.kernels[0].stats.launches, 6u);

  KernelTrace not_a_trace;
  add_kernel_trace_text(not_a_trace, "{\"kernel\": \"_Z1xv\"}\n", "other.jsonl");
  EXPECT_TRUE(not_a_trace.processes.empty());
  ASSERT_EQ(not_a_trace.problems.size(), 1u);
  EXPECT_EQ(not_a_trace.problems[0].where, "other.jsonl:1");
  EXPECT_NE(not_a_trace.problems[0].message.find("not a kernel trace"), std::string::npos);
}

TEST(KernelTrace, figures_over_2_to_the_53_are_refused_and_sums_never_wrap) {
  std::string header = R"T({"ciq_kernel_trace": 1, "pid": 9, "status": "ok"})T" "\n";
  auto line = [](const char* name, const std::string& launches, const std::string& total, const char* extra = "") {
    return std::string(R"T({"kernel": ")T") + name + R"T(", "grid": [1,1,1], "block": [1,1,1], "launches": )T" + launches +
           R"T(, "total_ns": )T" + total + extra + "}\n";
  };
  std::string at_bound = std::to_string(k_max_trace_count);
  std::string text = header + line("huge", "1", "9223372036854775808") + line("huge", "1", "9223372036854775808") +
                     line("many", "18446744073709551615", "5") + line("slow", "1", "5", R"T(, "durations_ns": [18446744073709551615])T") +
                     line("small", "1", "1000000") + line("zero", "0", "77777");
  KernelTrace trace;
  add_kernel_trace_text(trace, text, "kernels-9.jsonl");
  summarise_kernels(trace);
  ASSERT_EQ(trace.problems.size(), 4u);
  EXPECT_EQ(trace.problems[0].where, "kernels-9.jsonl:2");
  EXPECT_EQ(trace.problems[0].message, "kernel huge: total_ns 9223372036854775808 is above 2^53, not a measurement; skipped");
  EXPECT_EQ(trace.problems[2].message, "kernel many: launches 18446744073709551615 is above 2^53, not a measurement; skipped");
  EXPECT_EQ(trace.problems[3].message,
            "kernel slow: a duration of 18446744073709551615 ns is above 2^53, not a measurement; skipped");
  // A line without launches has no time either: shares over what ran.
  EXPECT_EQ(trace.total_ns, 1000000u);
  ASSERT_EQ(trace.kernels.size(), 2u);
  EXPECT_EQ(trace.kernels[0].kernel, "small");
  EXPECT_DOUBLE_EQ(trace.kernels[0].share, 1.0);
  EXPECT_DOUBLE_EQ(trace.kernels[1].share, 0.0);

  // At the bound, over many lines: the sum saturates, shares stay exact.
  KernelTrace big;
  std::string lines = header;
  for (int i = 0; i < 3300; ++i) lines += line(i % 3 ? "a" : "b", at_bound, at_bound);
  add_kernel_trace_text(big, lines, "kernels-10.jsonl");
  summarise_kernels(big);
  EXPECT_TRUE(big.problems.empty());
  EXPECT_EQ(big.total_ns, UINT64_MAX);
  ASSERT_EQ(big.kernels.size(), 2u);
  EXPECT_EQ(big.kernels[0].stats.total_ns, UINT64_MAX);
  EXPECT_EQ(big.kernels[1].stats.total_ns, 1100 * k_max_trace_count);
  EXPECT_NEAR(big.kernels[0].share, 2.0 / 3, 1e-12);
  EXPECT_NEAR(big.kernels[1].share, 1.0 / 3, 1e-12);
}

TEST(KernelTrace, median) {
  EXPECT_DOUBLE_EQ(median_of({}), 0);
  EXPECT_DOUBLE_EQ(median_of({7}), 7);
  EXPECT_DOUBLE_EQ(median_of({9, 1, 5}), 5);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
}

TEST(KernelCode, hashes_each_text_section_by_its_function_name) {
  std::string image = make_elf({{".text._Z1fv", "code of f"},
                                {".nv.info._Z1fv", "attributes"},
                                {".text._Z1gv", "code of g"},
                                {".text.", "no name"}});
  auto hashes = kernel_code_hashes(image);
  ASSERT_EQ(hashes.size(), 2u);
  EXPECT_EQ(hashes.at("_Z1fv"), image_xxh128("code of f"));
  EXPECT_EQ(hashes.at("_Z1gv"), image_xxh128("code of g"));
  // Only the function's own bytes: other sections and the layout do not count.
  std::string other = make_elf({{".text._Z1gv", "code of g"}, {".nv.info._Z1gv", "other attributes"}});
  EXPECT_EQ(kernel_code_hashes(other).at("_Z1gv"), hashes.at("_Z1gv"));
  EXPECT_EQ(hash_hex(image_xxh128("")), "99aa06d3014798d86001c324468d497f");  // XXH3-128 of nothing
}

TEST(KernelCode, anything_but_a_well_formed_elf_gives_no_hashes) {
  EXPECT_TRUE(kernel_code_hashes("").empty());
  EXPECT_TRUE(kernel_code_hashes(".version 9.0\n.target sm_90a\n").empty());
  EXPECT_FALSE(is_elf_image("\x7f" "EL"));
  std::string image = make_elf({{".text._Z1fv", "code of f"}});
  EXPECT_TRUE(is_elf_image(image));
  for (std::size_t cut : {std::size_t(16), std::size_t(64), image.size() - 1})
    EXPECT_TRUE(kernel_code_hashes(image.substr(0, cut)).empty()) << cut;
  std::string bad_strtab = image;
  bad_strtab[offsetof(Elf64_Ehdr, e_shstrndx)] = 100;
  EXPECT_TRUE(kernel_code_hashes(bad_strtab).empty());
}

namespace {

inject::KernelLaunch launch(std::string_view name, std::uint64_t start, std::uint64_t duration, std::int32_t grid_x = 1) {
  inject::KernelLaunch l;
  l.name = name;
  l.grid = {grid_x, 1, 1};
  l.block = {128, 1, 1};
  l.registers = 32;
  l.static_smem = 256;
  l.start_ns = start;
  l.end_ns = start + duration;
  return l;
}

KernelTrace read_back(const std::string& text) {
  KernelTrace trace;
  add_kernel_trace_text(trace, text, "kernels-1.jsonl");
  summarise_kernels(trace);
  return trace;
}

} // namespace

TEST(KernelTable, what_it_writes_the_reader_reads) {
  inject::KernelTable table;
  std::string image = make_elf({{".text._Z4stepPf", "step code"}, {".text._Z4tinyv", "tiny code"}});
  table.add_module(7, image);
  table.add_module(8, ".version 9.0\n");  // PTX for the JIT: no code hashes
  table.add_launch(launch("_Z4stepPf", 1000, 50));
  table.add_launch(launch("_Z4stepPf", 2000, 70));
  table.add_launch(launch("_Z4stepPf", 3000, 60, 2));
  table.add_launch(launch("triton_kernel_0", 4000, 5));
  table.add_launch(launch("_Z4stepPf", 5000, 0));  // no end: incomplete
  table.add_dropped_records(3);
  inject::ProcessFacts facts;
  facts.pid = 42;
  facts.exe = "/bin/app\xff";  // not UTF-8: replaced, not thrown
  facts.status = "ok";
  std::string text = table.render(facts);
  EXPECT_EQ(text.rfind("{\"ciq_kernel_trace\":1,\"pid\":42,\"exe\":", 0), 0u) << text;
  // Byte for byte what the writer wrote before the format had one owner
  // (tuner/formats/kernel_trace_lines.h): members in the documented order.
  EXPECT_EQ(text,
            "{\"ciq_kernel_trace\":1,\"pid\":42,\"exe\":\"/bin/app\xef\xbf\xbd\",\"status\":\"ok\",\"reason\":\"\",\"dropped_launches\":0,"
            "\"dropped_records\":3,\"incomplete_records\":1,\"module_identity\":\"ok\"}\n"
            "{\"module\":7,\"image\":\"elf\",\"bytes\":380,\"xxh128\":\"46d8c69aca3f49b5245ffe45d7dda1a9\",\"kernels\":2}\n"
            "{\"module\":8,\"image\":\"other\",\"bytes\":13,\"xxh128\":\"3c5bb4fa2d4eeb8b51957028ad51f4c4\",\"kernels\":0}\n"
            "{\"kernel\":\"_Z4stepPf\",\"demangled\":\"step(float*)\",\"device\":0,\"grid\":[1,1,1],\"block\":[128,1,1],\"dynamic_smem\":0,"
            "\"static_smem\":256,\"registers\":32,\"local_bytes\":0,\"launches\":2,\"total_ns\":120,\"min_ns\":50,\"max_ns\":70,"
            "\"first_start_ns\":1000,\"last_end_ns\":2070,\"durations_ns\":[50,70],\"code_xxh128\":\"4102fbc6769017934e5fa5e78453d086\","
            "\"module\":7}\n"
            "{\"kernel\":\"_Z4stepPf\",\"demangled\":\"step(float*)\",\"device\":0,\"grid\":[2,1,1],\"block\":[128,1,1],\"dynamic_smem\":0,"
            "\"static_smem\":256,\"registers\":32,\"local_bytes\":0,\"launches\":1,\"total_ns\":60,\"min_ns\":60,\"max_ns\":60,"
            "\"first_start_ns\":3000,\"last_end_ns\":3060,\"durations_ns\":[60],\"code_xxh128\":\"4102fbc6769017934e5fa5e78453d086\","
            "\"module\":7}\n"
            "{\"kernel\":\"triton_kernel_0\",\"demangled\":\"triton_kernel_0\",\"device\":0,\"grid\":[1,1,1],\"block\":[128,1,1],"
            "\"dynamic_smem\":0,\"static_smem\":256,\"registers\":32,\"local_bytes\":0,\"launches\":1,\"total_ns\":5,\"min_ns\":5,"
            "\"max_ns\":5,\"first_start_ns\":4000,\"last_end_ns\":4005,\"durations_ns\":[5],\"code_xxh128\":\"\",\"module\":-1}\n");

  KernelTrace trace = read_back(text);
  EXPECT_TRUE(trace.problems.empty());
  ASSERT_EQ(trace.processes.size(), 1u);
  EXPECT_EQ(trace.processes[0].pid, 42);
  EXPECT_EQ(trace.processes[0].incomplete_records, 1u);
  EXPECT_EQ(trace.processes[0].dropped_records, 3u);
  EXPECT_EQ(trace.processes[0].module_identity, "ok");
  ASSERT_EQ(trace.modules.size(), 2u);
  EXPECT_EQ(trace.modules[0].image, "elf");
  EXPECT_EQ(trace.modules[0].kernels, 2u);
  EXPECT_EQ(trace.modules[0].xxh128, hash_hex(image_xxh128(image)));
  EXPECT_EQ(trace.modules[1].image, "other");
  ASSERT_EQ(trace.records.size(), 3u);
  const KernelRecord& first = trace.records[0];
  EXPECT_EQ(first.kernel, "_Z4stepPf");
  EXPECT_EQ(first.demangled, "step(float*)");
  EXPECT_EQ(first.launches, 2u);
  EXPECT_EQ(first.durations_ns, (std::vector<std::uint64_t>{50, 70}));
  EXPECT_EQ(first.min_ns, 50u);
  EXPECT_EQ(first.max_ns, 70u);
  EXPECT_EQ(first.first_start_ns, 1000u);
  EXPECT_EQ(first.last_end_ns, 2070u);
  EXPECT_EQ(first.registers, 32u);
  EXPECT_EQ(first.static_smem, 256u);
  EXPECT_EQ(first.config.block, (std::array<std::uint32_t, 3>{128, 1, 1}));
  EXPECT_EQ(first.code_xxh128, hash_hex(image_xxh128("step code")));
  EXPECT_EQ(first.module, 7);
  EXPECT_EQ(trace.records[2].kernel, "triton_kernel_0");
  EXPECT_EQ(trace.records[2].demangled, "triton_kernel_0");  // not a C++ name: as is
  EXPECT_EQ(trace.records[2].code_xxh128, "");
  EXPECT_EQ(trace.records[2].module, -1);
  EXPECT_EQ(trace.kernels[0].stats.launches, 3u);
  EXPECT_DOUBLE_EQ(trace.kernels[0].stats.median_ns, 60);
}

TEST(KernelTable, a_name_in_several_modules_keeps_its_hash_only_when_the_code_agrees) {
  inject::KernelTable table;
  table.add_module(1, make_elf({{".text._Z1fv", "f"}, {".text._Z1gv", "g one"}}));
  table.add_module(2, make_elf({{".text._Z1fv", "f"}, {".text._Z1gv", "g two"}}));
  table.add_launch(launch("_Z1fv", 10, 1));
  table.add_launch(launch("_Z1gv", 10, 1));
  inject::ProcessFacts facts;
  facts.status = "ok";
  KernelTrace trace = read_back(table.render(facts));
  ASSERT_EQ(trace.records.size(), 2u);
  EXPECT_EQ(trace.records[0].code_xxh128, hash_hex(image_xxh128("f")));
  EXPECT_EQ(trace.records[0].module, -1);
  EXPECT_EQ(trace.records[1].code_xxh128, "");
  EXPECT_EQ(trace.records[1].module, -1);
}

TEST(KernelTable, memory_is_bounded_and_what_is_not_kept_is_counted) {
  inject::KernelTable table;
  const std::size_t cap = inject::KernelTable::max_durations_per_config;
  for (std::size_t i = 0; i < cap + 5; ++i) table.add_launch(launch("_Z4stepPf", 1 + i * 10, 3));
  inject::ProcessFacts facts;
  facts.status = "ok";
  KernelTrace trace = read_back(table.render(facts));
  ASSERT_EQ(trace.records.size(), 1u);
  EXPECT_EQ(trace.records[0].launches, cap + 5);
  EXPECT_EQ(trace.records[0].total_ns, 3 * (cap + 5));
  EXPECT_EQ(trace.records[0].durations_ns.size(), cap);
  EXPECT_EQ(trace.processes[0].dropped_launches, 5u);
}

TEST(KernelTable, demangles_cxx_names_only) {
  EXPECT_EQ(inject::demangle("_Z7heavy_aPKfPfi"), "heavy_a(float const*, float*, int)");
  EXPECT_EQ(inject::demangle("softmax_kernel"), "softmax_kernel");
  EXPECT_EQ(inject::demangle("_Znot a name"), "_Znot a name");
}

TEST(KernelTrace, a_count_that_is_not_a_whole_number_is_refused_not_read_as_zero) {
  std::string text = R"T({"ciq_kernel_trace": 1, "pid": 9, "status": "ok"})T" "\n"
                     R"T({"kernel": "past", "grid": [1,1,1], "block": [1,1,1], "launches": 1, "total_ns": 18446744073709551621})T" "\n"
                     R"T({"kernel": "negative", "grid": [1,1,1], "block": [1,1,1], "launches": 1, "total_ns": 5, "registers": -1})T" "\n"
                     R"T({"kernel": "ok", "grid": [1,1,1], "block": [1,1,1], "launches": 1, "total_ns": 5, "registers": 32})T" "\n";
  KernelTrace trace;
  add_kernel_trace_text(trace, text, "kernels-9.jsonl");
  summarise_kernels(trace);
  ASSERT_EQ(trace.problems.size(), 2u);
  EXPECT_EQ(trace.problems[0].message, "kernel past: total_ns is not a whole number of at most 2^64 - 1; skipped");
  EXPECT_EQ(trace.problems[1].message, "kernel negative: registers is not a whole number of at most 2^64 - 1; skipped");
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.kernels[0].kernel, "ok");
}
