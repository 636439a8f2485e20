// Reading kernel captures (the format: capture.h). nlohmann/json directly:
// device addresses and sizes need all 64 bits. Every file of a capture is
// opened once, by open_input, and read through that descriptor.
#include "tuner/formats/capture.h"

#include "tuner/formats/capture_lines.h"

#include "utils/json_members.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/safe_open.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace ciq::formats {

namespace {

using namespace json_members;

constexpr std::uint64_t max_json_bytes = std::uint64_t(64) << 20;  // param buffers are at most 32 KiB

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool from_hex(const std::string& text, std::vector<std::uint8_t>& out) {
  if (text.size() % 2) return false;
  out.clear();
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(std::uint8_t(hi * 16 + lo));
  }
  return true;
}

/// "0x..." as a 64-bit address.
bool read_address(const std::string& text, std::uint64_t& out) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return false;
  out = 0;
  for (std::size_t i = 2; i < text.size(); ++i) {
    int d = hex_digit(text[i]);
    if (d < 0) return false;
    out = out * 16 + std::uint64_t(d);
  }
  return true;
}

/// A capture's text file (launch.json, compile.json, an index), read once
/// through open_input: never through a link, never waiting on a FIFO.
Result<std::string> read_capture_text(const std::string& path) {
  return read_input(path, InputRules{/*follow_links=*/false, std::nullopt, max_json_bytes});
}

Result<json> read_json_file(const std::string& path) {
  auto text = read_capture_text(path);
  if (!text) return text.error();
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return make_error("parse", path + ": not a JSON object");
  return doc;
}

Error bad(const std::string& path, const std::string& what) { return make_error("parse", path + ": " + what); }

/// "" (not recorded) or an XXH3-128 digest in hex.
bool is_digest(const std::string& text) {
  return text.empty() || (text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) { return hex_digit(c) >= 0; }));
}

/// Checks that allocation `i`'s file is there as launch.json says: opened
/// (open_input: a regular file, no link, exactly its size), then closed; it
/// is read later, for use, by read_capture_image, opened and checked again.
Result<void> check_image(const std::string& path, std::size_t i, const CaptureAllocation& a) {
  std::string which = "allocation " + std::to_string(i) + "'s bytes";
  auto in = open_input(a.file, InputRules{false, std::nullopt, UINT64_MAX});
  if (!in && in.error().code == ciq::errc::absent) return bad(path, which + " are missing: " + a.file);
  if (!in) return bad(path, which + " cannot be used: " + in.error().message);
  ::close(in->fd);
  if (std::uint64_t(in->st.st_size) != a.size)
    return bad(path, a.file + " holds " + std::to_string(in->st.st_size) + " bytes, not the allocation's " + std::to_string(a.size));
  return {};
}
Result<void> read_compile(const std::string& dir, Capture& c) {
  std::string path = join_path(dir, "compile.json");
  auto doc = read_json_file(path);
  if (!doc && doc.error().code == ciq::errc::absent) return {};
  if (!doc) return doc.error();
  CaptureCompile& k = c.compile;
  k.ptx = string_member(*doc, "ptx");
  k.target = string_member(*doc, "target");
  k.module_key = string_member(*doc, "module_key");
  k.ptxas = string_member(*doc, "ptxas");
  k.ptxas_version = string_member(*doc, "ptxas_version");
  k.ptxas_release = string_member(*doc, "ptxas_release");
  k.ptxas_identity = string_member(*doc, "ptxas_identity");
  if (k.ptx.empty() || k.target.empty()) return bad(path, "\"ptx\" and \"target\" are required");
  if (!is_digest(k.ptxas_identity)) return bad(path, "\"ptxas_identity\" is not a digest (32 hex digits)");
  // A ptxas target, sm_90 or sm_90a: it is shown, and compared with GPUs.
  bool target_ok = k.target.size() > 3 && k.target.size() < 12 && k.target.compare(0, 3, "sm_") == 0;
  for (std::size_t i = 3; target_ok && i < k.target.size(); ++i)
    target_ok = std::isdigit(static_cast<unsigned char>(k.target[i])) || (i + 1 == k.target.size() && (k.target[i] == 'a' || k.target[i] == 'f'));
  if (!target_ok) return bad(path, "\"target\" is not a ptxas target such as sm_90a");
  if (k.ptx[0] != '/') k.ptx = join_path(dir, k.ptx);
  if (auto it = doc->find("args"); it != doc->end()) {
    if (!it->is_array()) return bad(path, "\"args\" is not a list of words");
    for (const auto& a : *it) {
      if (!a.is_string()) return bad(path, "\"args\" is not a list of words");
      k.args.push_back(a.get<std::string>());
    }
  }
  c.has_compile = true;
  return {};
}

} // namespace

std::uint64_t Capture::bytes() const {
  std::uint64_t total = 0;
  for (const auto& a : allocations) total += a.size;
  return total;
}

namespace {

// launch.json's kernel, process, device and launch configuration into `c`.
Result<void> read_launch(const json& d, const std::string& path, Capture& c) {
  c.kernel = string_member(d, "kernel");
  if (c.kernel.empty()) return bad(path, "no \"kernel\"");
  std::uint64_t n = 0;
  if (read_unsigned(d, "pid", n)) c.pid = std::int64_t(n);
  c.exe = string_member(d, "exe");
  if (read_unsigned(d, "device", n)) c.device = int(n);
  c.device_name = string_member(d, "device_name");
  if (auto it = d.find("compute_capability"); it != d.end() && it->is_array() && it->size() == 2 &&
                                              (*it)[0].is_number_unsigned() && (*it)[1].is_number_unsigned())
    c.compute_capability = {int((*it)[0].get<std::uint64_t>() & 0xff), int((*it)[1].get<std::uint64_t>() & 0xff)};
  if (!read_dims(d, "grid", c.grid) || !read_dims(d, "block", c.block)) return bad(path, "\"grid\" and \"block\" must be [x, y, z]");
  for (std::uint32_t v : {c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]})
    if (v == 0) return bad(path, "a launch of no block or no thread (a 0 in \"grid\" or \"block\")");
  if (!read_unsigned(d, "dynamic_smem", n) || n > UINT32_MAX) return bad(path, "no \"dynamic_smem\"");
  c.dynamic_smem = std::uint32_t(n);
  c.launch_api = string_member(d, "launch_api");
  c.code_xxh128 = string_member(d, "code_xxh128");
  if (read_unsigned(d, "config_launches", n)) c.config_launches = n;
  if (!from_hex(string_member(d, "param_bytes"), c.param_bytes)) return bad(path, "\"param_bytes\" is not hex");
  return {};
}

// The kernel parameters: each inside param_bytes, in order, none overlapping.
Result<void> read_params(const json& d, const std::string& path, Capture& c) {
  auto params = d.find("params");
  if (params == d.end() || !params->is_array()) return bad(path, "no \"params\" list");
  for (const auto& p : *params) {
    CaptureParam param;
    if (!p.is_object() || !read_unsigned(p, "offset", param.offset) || !read_unsigned(p, "size", param.size))
      return bad(path, "a parameter without \"offset\" and \"size\"");
    if (param.size > c.param_bytes.size() || param.offset > c.param_bytes.size() - param.size)
      return bad(path, "parameter " + std::to_string(c.params.size()) + " lies outside \"param_bytes\"");
    if (!c.params.empty() && param.offset < c.params.back().offset + c.params.back().size)
      return bad(path, "parameter " + std::to_string(c.params.size()) + " overlaps the one before it (parameters come in order)");
    c.params.push_back(param);
  }
  return {};
}

// The allocations: each with its image file in the capture's directory (checked:
// a regular file of the allocation's size) and its digests.
Result<void> read_allocations(const json& d, const std::string& path, const std::string& dir, Capture& c) {
  auto allocations = d.find("allocations");
  if (allocations == d.end() || !allocations->is_array()) return bad(path, "no \"allocations\" list");
  for (const auto& a : *allocations) {
    CaptureAllocation alloc;
    if (!a.is_object() || !read_address(string_member(a, "base"), alloc.base) || !read_unsigned(a, "size", alloc.size))
      return bad(path, "an allocation without \"base\" (\"0x...\") and \"size\"");
    std::string file = string_member(a, "file");
    if (file.empty() || file.find('/') != std::string::npos || file.find('\0') != std::string::npos || file[0] == '.')
      return bad(path, "an allocation's \"file\" must name a file in the capture's directory");
    alloc.file = join_path(dir, file);
    if (auto there = check_image(path, c.allocations.size(), alloc); !there) return there.error();
    alloc.before_xxh128 = string_member(a, "before_xxh128");
    alloc.after_xxh128 = string_member(a, "after_xxh128");
    if (!is_digest(alloc.before_xxh128) || !is_digest(alloc.after_xxh128))
      return bad(path, "allocation " + std::to_string(c.allocations.size()) +
                           "'s \"before_xxh128\" or \"after_xxh128\" is not a digest (32 hex digits, or \"\" for none)");
    c.allocations.push_back(std::move(alloc));
  }
  return {};
}

// The pointer parameters: each an 8-byte parameter listed once, holding the
// address its allocation and offset say.
Result<void> read_pointers(const json& d, const std::string& path, Capture& c) {
  auto pointers = d.find("pointers");
  if (pointers != d.end()) {
    if (!pointers->is_array()) return bad(path, "\"pointers\" is not a list");
    std::vector<bool> is_pointer(c.params.size(), false);  // each parameter listed once: one look each
    for (const auto& p : *pointers) {
      std::uint64_t param = 0, allocation = 0;
      CapturePointer ptr;
      if (!p.is_object() || !read_unsigned(p, "param", param) || !read_unsigned(p, "allocation", allocation) ||
          !read_unsigned(p, "offset", ptr.offset))
        return bad(path, "a pointer without \"param\", \"allocation\" and \"offset\"");
      if (param >= c.params.size() || c.params[param].size != 8)
        return bad(path, "pointer names parameter " + std::to_string(param) + ", which is not an 8-byte parameter");
      if (allocation >= c.allocations.size())
        return bad(path, "pointer of parameter " + std::to_string(param) + " names allocation " + std::to_string(allocation) +
                             " of " + std::to_string(c.allocations.size()));
      if (ptr.offset >= c.allocations[allocation].size)
        return bad(path, "pointer of parameter " + std::to_string(param) + " lies outside its allocation");
      // The parameter's value must be that address: a pointer the buffer
      // does not hold would be relocated into something else.
      std::uint64_t value = 0;
      for (int b = 7; b >= 0; --b) value = value << 8 | c.param_bytes[c.params[param].offset + std::size_t(b)];
      if (value != c.allocations[allocation].base + ptr.offset)
        return bad(path, "pointer of parameter " + std::to_string(param) + " says allocation " + std::to_string(allocation) +
                             " + " + std::to_string(ptr.offset) + ", but \"param_bytes\" holds another address there");
      if (is_pointer[param]) return bad(path, "parameter " + std::to_string(param) + " is listed as a pointer twice");
      is_pointer[param] = true;
      ptr.param = std::uint32_t(param);
      ptr.allocation = std::uint32_t(allocation);
      c.pointers.push_back(ptr);
    }
  }
  return {};
}

} // namespace

Result<Capture> read_capture(const std::string& dir_given) {
  std::string dir = real_path(dir_given).value_or(dir_given);
  std::string path = join_path(dir, k_launch_file);
  auto doc = read_json_file(path);
  if (!doc) return doc.error();
  const json& d = *doc;
  auto version = d.find(k_capture_member);
  if (version == d.end() || !version->is_number_unsigned() || version->get<std::uint64_t>() != k_capture_version)
    return bad(path, "not a capture of format " + std::to_string(k_capture_version) + " (\"" + k_capture_member + "\": " +
                         std::to_string(k_capture_version) + ")");
  Capture c;
  c.dir = dir;
  if (auto r = read_launch(d, path, c); !r) return r.error();
  if (auto r = read_params(d, path, c); !r) return r.error();
  if (auto r = read_allocations(d, path, dir, c); !r) return r.error();
  if (auto r = read_pointers(d, path, c); !r) return r.error();
  if (auto compiled = read_compile(dir, c); !compiled) return compiled.error();
  return c;
}

namespace {

// An index-<tag>.jsonl (its `text`, read from `path`) into `set`: its
// process's line and one entry per kernel line; bad lines said in
// set.problems, and a whole file of another version skipped.
void read_index(const std::string& path, const std::string& text, CaptureSet& set) {
  CaptureIndex index;
  index.file = path;
  bool skipped = false;  // another version of the format
  std::size_t line_no = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      set.problems.push_back(path + ":" + std::to_string(line_no) + ": not a JSON object");
      continue;
    }
    if (j.contains(k_capture_index_member)) {
      if (unsigned_member(j, k_capture_index_member) != k_capture_index_version) {
        set.problems.push_back(path + ":" + std::to_string(line_no) + ": capture index version " +
                               j[k_capture_index_member].dump() + " is not " + std::to_string(k_capture_index_version) +
                               "; file skipped");
        skipped = true;
        break;
      }
      std::uint64_t pid = 0;
      if (read_unsigned(j, "pid", pid)) index.pid = std::int64_t(pid);
      index.exe = string_member(j, "exe");
      index.status = string_member(j, "status");
      index.reason = string_member(j, "reason");
      index.untracked_launches = unsigned_member(j, "untracked_launches");
      index.graph_launches = unsigned_member(j, "graph_launches");
      continue;
    }
    CaptureIndexEntry e;
    e.kernel = string_member(j, "kernel");
    std::uint64_t smem = 0;
    if (e.kernel.empty() || !read_dims(j, "grid", e.grid) || !read_dims(j, "block", e.block) ||
        !read_unsigned(j, "dynamic_smem", smem) || smem > UINT32_MAX) {
      set.problems.push_back(path + ":" + std::to_string(line_no) + ": not a kernel line");
      continue;
    }
    e.dynamic_smem = std::uint32_t(smem);
    read_unsigned(j, "launches", e.launches);
    e.captured = string_member(j, "captured");
    e.refused = string_member(j, "refused");
    index.entries.push_back(std::move(e));
  }
  if (!skipped) set.indexes.push_back(std::move(index));
}

} // namespace

Result<CaptureSet> read_capture_set(const std::string& root) {
  auto names = list_directory(root);
  if (!names) return names.error();
  std::sort(names->begin(), names->end());
  CaptureSet set;
  for (const auto& name : *names) {
    std::string path = join_path(root, name);
    if (name.rfind("index-", 0) == 0 && name.size() > 12 && name.compare(name.size() - 6, 6, ".jsonl") == 0) {
      auto text = read_capture_text(path);
      if (!text) {
        set.problems.push_back(path + ": " + text.error().message);
        continue;
      }
      read_index(path, *text, set);
    } else if (name[0] != '.' && is_directory(path) && path_exists(join_path(path, k_launch_file))) {
      auto capture = read_capture(path);
      if (capture) set.captures.push_back(std::move(*capture));
      else set.problems.push_back(capture.error().message);
    }
  }
  return set;
}

Result<void> write_capture_compile(const std::string& dir, const CaptureCompile& compile) {
  json j = {{"ptx", compile.ptx},
            {"target", compile.target},
            {"ptxas", compile.ptxas},
            {"ptxas_version", compile.ptxas_version},
            {"ptxas_release", compile.ptxas_release},
            {"ptxas_identity", compile.ptxas_identity},
            {"args", compile.args},
            {"module_key", compile.module_key}};
  return write_file_atomic(join_path(dir, "compile.json"), j.dump(2) + "\n");
}

Result<void> read_capture_image(const CaptureAllocation& a, const ImageSink& sink, std::size_t chunk) {
  auto in = open_input(a.file, InputRules{false, a.size, UINT64_MAX});
  if (!in) return in.error();
  int fd = in->fd;
  std::vector<std::uint8_t> buffer(std::size_t(std::min<std::uint64_t>(std::max<std::size_t>(chunk, 1), std::max<std::uint64_t>(a.size, 1))));
  Hasher digest;
  std::uint64_t done = 0;
  Result<void> outcome;
  while (outcome && done < a.size) {
    std::size_t want = std::size_t(std::min<std::uint64_t>(buffer.size(), a.size - done));
    ssize_t got = ::read(fd, buffer.data(), want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) outcome = make_error("io", "cannot read " + a.file + ": " + std::strerror(errno));
    else if (got == 0) outcome = make_error("io", a.file + " ended after " + std::to_string(done) + " of its " + std::to_string(a.size) + " bytes (it changed while it was read)");
    else {
      digest.add(std::string_view(reinterpret_cast<const char*>(buffer.data()), std::size_t(got)));
      outcome = sink(done, buffer.data(), std::size_t(got));
      done += std::uint64_t(got);
    }
  }
  ::close(fd);
  if (!outcome) return outcome;
  std::string recorded = a.before_xxh128;
  std::transform(recorded.begin(), recorded.end(), recorded.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  std::string actual = to_hex(digest.digest());
  if (!recorded.empty() && recorded != actual)
    return make_error(ciq::errc::corrupt, a.file + " does not hold the bytes the capture recorded: its digest is " + actual +
                                     ", launch.json records " + recorded + " (\"before_xxh128\"); capture the launch again");
  return {};
}

} // namespace ciq::formats
