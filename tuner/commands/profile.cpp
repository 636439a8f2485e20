#include "tuner/commands/profile.h"

#include "tuner/measure/gpu_driver.h"
#include "tuner/run/captures.h"
#include "utils/files.h"
#include "utils/text.h"

#include <cstdio>

namespace ciq::tuner {

namespace {

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

// `text` as shown on a terminal (utils/text.h printable()), cut to `width`
// bytes with "..." (at a character's start, not inside its UTF-8 bytes).
std::string shorten(const std::string& text, std::size_t width) {
  std::string shown = printable(text);
  if (shown.size() <= width) return shown;
  std::size_t cut = width - 3;
  while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xc0) == 0x80) --cut;
  return shown.substr(0, cut) + "...";
}

} // namespace

std::string format_profile(const formats::KernelTrace& trace, const std::vector<ProfileRow>& rows, int top) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%6s %6s %10s %9s %11s %4s  %-14s %s\n", "share", "cum", "total ms", "launches",
                "median us", "regs", "key", "kernel");
  out += line;
  std::size_t shown = 0;
  for (const auto& row : rows) {
    if (top > 0 && shown == std::size_t(top)) break;
    ++shown;
    const auto& k = *row.kernel;
    const auto* config = largest_config(k);
    std::string key = row.origins.empty() ? "-" : printable(row.origins.front().key.substr(0, 12));
    if (row.origins.size() > 1) key += "+" + std::to_string(row.origins.size() - 1);
    std::snprintf(line, sizeof line, "%5s%% %5s%% %10s %9llu %11s %4s  %-14s %s\n", fixed(100 * k.share, 1).c_str(),
                  fixed(100 * row.cumulative, 1).c_str(), fixed(double(k.stats.total_ns) / 1e6, 3).c_str(),
                  (unsigned long long)k.stats.launches, fixed(k.stats.median_ns / 1e3, 2).c_str(),
                  config ? std::to_string(config->registers).c_str() : "-", key.c_str(),
                  shorten(k.demangled.empty() ? k.kernel : k.demangled, 80).c_str());
    out += line;
  }
  if (shown < rows.size()) out += "(" + std::to_string(rows.size() - shown) + " more kernels; --top 0 lists all)\n";
  std::size_t processes = 0;
  for (const auto& p : trace.processes) processes += p.timed();
  out += "GPU time in kernels: " + fixed(double(trace.total_ns) / 1e6, 3) + " ms over " + std::to_string(rows.size()) +
         " kernels, " + std::to_string(processes) + " process(es)\n";
  return out;
}

Result<int> run_profile(const ProfileOptions& o) {
  std::string kernel_dir = o.trace_dir, build_dir = o.build_trace_dir;
  // The --out DIR of an earlier profile: its kernels/ and build-trace/.
  if (!kernel_dir.empty() && is_directory(join_path(kernel_dir, "kernels"))) {
    if (build_dir.empty() && is_directory(join_path(kernel_dir, "build-trace"))) build_dir = join_path(kernel_dir, "build-trace");
    kernel_dir = join_path(kernel_dir, "kernels");
  }
  if (!o.trace_dir.empty() && !o.argv.empty())
    return make_error(ciq::errc::usage, "--trace reads a recorded profile and runs nothing: give either --trace DIR or a program after '--'");
  int program_status = 0;
  if (!o.capture.empty() && !o.trace_dir.empty())
    return make_error(ciq::errc::usage, "--capture records launches while the program runs: give the program after '--', not --trace");
  // Without --out the traces are scratch, as a compiler cache leaves no
  // litter: removed at the end of a profile that went well (`done`), else
  // kept for a look, and said where (a failed build's error says it).
  struct Scratch {
    std::string dir;
    bool keep = false, done = false;
    ~Scratch() {
      if (dir.empty()) return;
      if (done && !keep) remove_tree(dir);
      else std::fprintf(stderr, "ciq-tuner: the traces are kept in %s\n", printable(dir).c_str());
    }
  } scratch;
  if (kernel_dir.empty() && !o.argv.empty()) {
    // Said before the build and the program run, which would time nothing.
    if (std::string reason = no_gpu_reason(); !reason.empty())
      return make_error("no-gpu", no_gpu_message("profile times the program's kernels", reason));
  }
  if (kernel_dir.empty()) {
    auto captured = capture_profile(o.build, o.argv, o.shell, o.out_dir, o.library, {}, false, o.capture);
    if (!captured) return captured.error();
    if (o.out_dir.empty()) scratch.dir = captured->dir, scratch.keep = o.keep || !o.capture.empty();
    kernel_dir = captured->kernel_dir;
    build_dir = captured->build_dir;
    program_status = captured->program_status;
    if (!captured->program_describe.empty())
      std::fprintf(stderr, "ciq-tuner: warning: the program ended with %s\n", captured->program_describe.c_str());
    if (!captured->captures_dir.empty()) {
      auto outcome = attach_compiles(captured->captures_dir, {build_dir});
      if (!outcome) return outcome.error();
      say_captures(*outcome, o.capture, false);
    }
  }
  auto p = read_profile(kernel_dir, build_dir);
  if (!p) {
    if (p.error().code != ciq::errc::no_timing) return p.error();
    std::string note = o.trace_dir.empty() ? no_driver_note() : "";
    std::fprintf(stderr, "ciq-tuner: error: %s%s\n", printable_lines(p.error().message).c_str(), note.c_str());
    return 1;
  }
  auto rows = profile_rows(p->trace, p->build);
  std::string text = o.json ? profile_json(profile_of(p->trace, rows)) + "\n" : format_profile(p->trace, rows, o.top);
  std::fwrite(text.data(), 1, text.size(), stdout);
  scratch.done = program_status == 0;
  return program_status;
}

} // namespace ciq::tuner
