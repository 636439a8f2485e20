#include "cache/acf_candidates.h"

#include "cache/entries.h"
#include "cache/pack.h"
#include "cache/store.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/json.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdint>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <minizip/unzip.h>
#include <zlib.h>

namespace ciq::cache {

namespace {

constexpr std::size_t k_max_files = 4096;
constexpr std::string_view k_set_format = "ciq-acf-candidates/1";

std::string line(std::string_view key, std::string_view value) { return format_key_value(key, value) + "\n"; }

Error bad(const std::string& origin, const std::string& why) { return make_error("invalid", origin + ": " + why); }

// The files of a zip archive, by name, through minizip (zlib's contrib
// unzip): every entry's declared size is checked against the blob limit
// before it is read, and no more than that is ever inflated (a zip bomb that
// lies about its sizes is cut off), and minizip checks each CRC.
Result<std::map<std::string, std::string>> read_zip(const std::string& path) {
  unzFile zip = unzOpen64(path.c_str());
  if (!zip) return bad(path, "not a zip archive, or a damaged one");
  struct Closer {
    unzFile z;
    ~Closer() { unzClose(z); }
  } closer{zip};
  unz_global_info64 global;
  if (unzGetGlobalInfo64(zip, &global) != UNZ_OK) return bad(path, "damaged central directory");
  if (global.number_entry > k_max_files) return bad(path, "more than " + std::to_string(k_max_files) + " files");
  std::map<std::string, std::string> files;
  for (int r = unzGoToFirstFile(zip); r != UNZ_END_OF_LIST_OF_FILE; r = unzGoToNextFile(zip)) {
    if (r != UNZ_OK) return bad(path, "damaged central directory");
    unz_file_info64 info;
    char name_buf[1024];
    if (unzGetCurrentFileInfo64(zip, &info, name_buf, sizeof name_buf, nullptr, 0, nullptr, 0) != UNZ_OK ||
        info.size_filename >= sizeof name_buf)
      return bad(path, "damaged central directory (or a name over 1023 bytes)");
    std::string name(name_buf, info.size_filename);
    if (!name.empty() && name.back() == '/') continue; // a directory entry
    if (info.uncompressed_size > k_max_blob_bytes)
      return bad(path, name + " is over the " + std::to_string(k_max_blob_bytes >> 20) + " MiB limit");
    if (info.compression_method != 0 && info.compression_method != Z_DEFLATED)
      return bad(path, name + ": unsupported compression method " + std::to_string(info.compression_method));
    if (unzOpenCurrentFile(zip) != UNZ_OK) return bad(path, name + ": damaged local header");
    // One byte more than declared: reading it means the sizes lie.
    std::string out(std::size_t(info.uncompressed_size) + 1, '\0');
    std::size_t got = 0;
    int n = 0;
    while (got < out.size() && (n = unzReadCurrentFile(zip, out.data() + got, unsigned(out.size() - got))) > 0)
      got += std::size_t(n);
    bool damaged = n < 0 || got != info.uncompressed_size;
    int closed = unzCloseCurrentFile(zip); // UNZ_CRCERROR when the data does not match its CRC
    if (damaged) return bad(path, name + ": damaged or truncated compressed data");
    if (closed == UNZ_CRCERROR) return bad(path, name + ": CRC mismatch (damaged)");
    if (closed != UNZ_OK) return bad(path, name + ": damaged");
    out.resize(got);
    files.emplace(std::move(name), std::move(out));
  }
  return files;
}

// The manifest NVIDIA's CompileIQ Booster Packs carry, in the pack's folder:
//   {"cuda_version": "13.0", "controls_stage": "ptxas", "supported_gpus": [...],
//    "acfs": [{"filename": "a.acf", "sha256": "<64 hex>", "size_bytes": N}, ...]}
constexpr const char* k_booster_manifest = "booster-pack-manifest.json";

// Every regular file directly in `dir`, and a Booster Pack's folder one
// level down (names relative to `dir`; manifests use them).
Result<std::map<std::string, std::string>> read_dir(const std::string& dir) {
  std::map<std::string, std::string> files;
  auto entries = list_directory(dir);
  if (!entries) return entries.error();
  std::vector<std::string> names;
  for (const auto& n : *entries) {
    if (n == "manifest.json" || n == k_booster_manifest || ends_with(n, ".acf")) names.push_back(n);
    // A Booster Pack unpacked: <pack>/booster-pack-manifest.json and its ACFs.
    std::string sub = join_path(dir, n);
    if (n[0] != '.' && is_directory(sub) && path_exists(join_path(sub, k_booster_manifest)))
      if (auto inner = list_directory(sub))
        for (const auto& m : *inner)
          if (m == k_booster_manifest || ends_with(m, ".acf")) names.push_back(n + "/" + m);
  }
  if (names.size() > k_max_files) return bad(dir, "more than " + std::to_string(k_max_files) + " files");
  for (const auto& n : names) {
    auto text = read_file(join_path(dir, n));
    if (!text) return text.error();
    if (text->size() > k_max_blob_bytes) return bad(dir, n + " is over the " + std::to_string(k_max_blob_bytes >> 20) + " MiB limit");
    files.emplace(n, std::move(*text));
  }
  return files;
}

// The manifest of a source: a Booster Pack's (at the top or in one folder;
// of several, the last by name) before ciq's own manifest.json; none is fine.
const std::pair<const std::string, std::string>* find_manifest(const std::map<std::string, std::string>& files) {
  const std::pair<const std::string, std::string>* found = nullptr;
  for (const auto& entry : files) {
    const std::string& n = entry.first;
    bool booster = base_name(n) == k_booster_manifest && std::count(n.begin(), n.end(), '/') <= 1;
    if (booster || n == "manifest.json")
      if (!found || booster) found = &entry;
  }
  return found;
}

bool safe_set_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name[0] != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; });
}

std::string set_path(const std::string& cache_dir, const std::string& name) {
  return join_path(join_path(cache_dir, "acf-candidates"), name + ".list");
}

} // namespace

Result<AcfCandidateSet> import_acf_candidates(const std::string& cache_dir, const std::string& path, std::string name) {
  auto files = [&]() -> Result<std::map<std::string, std::string>> {
    if (is_directory(path)) return read_dir(path);
    if (!path_exists(path)) return make_error("io", path + ": no such file or directory");
    return read_zip(path);
  }();
  if (!files) return files.error();

  AcfCandidateSet set;
  set.source = path;
  if (name.empty()) {
    name = base_name(path);
    if (auto dot = name.rfind('.'); dot != std::string::npos && dot > 0) name.resize(dot);
  }
  if (!safe_set_name(name)) return bad(path, "'" + name + "' is not a usable set name (letters, digits, '-', '_', '.')");
  set.name = name;

  std::vector<std::pair<std::string, std::string>> chosen; // file name -> bytes
  auto manifest = find_manifest(*files);
  if (!manifest) {
    for (auto& [n, bytes] : *files)
      if (ends_with(n, ".acf")) chosen.emplace_back(n, bytes);
  } else {
    const std::string& manifest_name = manifest->first;
    bool booster = ends_with(manifest_name, k_booster_manifest);
    std::string folder = manifest_name.substr(0, manifest_name.size() - base_name(manifest_name).size()); // "" or "pack/"
    auto j = parse_json(manifest->second);
    if (!j) return bad(path, manifest_name + ": " + j.error().message);
    set.cuda_version = (*j)["cuda_version"].string_or("");
    set.controls_stage = (*j)["controls_stage"].string_or("");
    for (const auto& g : (*j)["supported_gpus"].array) set.supported_gpus.push_back(g.string_or(""));
    if (set.cuda_version.empty()) return bad(path, manifest_name + " has no cuda_version");
    const JsonValue& list = (*j)[booster ? "acfs" : "files"];
    if (list.kind != JsonValue::Kind::array || list.array.empty()) return bad(path, manifest_name + " lists no ACFs");
    for (const auto& entry : list.array) {
      std::string file = entry[booster ? "filename" : "path"].string_or(""), digest = entry["sha256"].string_or("");
      if (file.empty() || file.find('/') != std::string::npos || file.find('\\') != std::string::npos || file[0] == '.')
        return bad(path, manifest_name + " lists '" + file + "': not a plain file name");
      auto it = files->find(folder + file);
      if (it == files->end()) return bad(path, manifest_name + " lists '" + file + "', which is not in the source");
      if (to_hex(sha256(it->second)) != digest)
        return bad(path, file + ": sha256 does not match the manifest (damaged or altered); nothing imported");
      if (booster && !entry["size_bytes"].is_null() && entry["size_bytes"].number_or(-1) != double(it->second.size()))
        return bad(path, file + ": size does not match the manifest's size_bytes; nothing imported");
      chosen.emplace_back(file, it->second);
    }
  }
  if (chosen.empty()) return bad(path, "no .acf files");

  std::map<Sha256, std::string> blobs;
  for (auto& [file, bytes] : chosen) {
    if (bytes.empty()) return bad(path, file + " is empty");
    Sha256 digest = sha256(bytes);
    set.acfs.push_back({file, to_hex(digest), bytes.size()});
    blobs.emplace(digest, std::move(bytes));
  }
  auto store = Store::open_for_writing(cache_dir);
  if (!store) return store.error();
  if (auto put = write_entries(*store, std::vector<std::pair<Hash128, std::string>>{}, blobs); !put) return put.error();

  std::string text = "format = " + std::string(k_set_format) + "\nname = " + set.name + "\n" +
                     line("cuda_version", set.cuda_version) + line("controls_stage", set.controls_stage) + line("source", set.source);
  for (const auto& g : set.supported_gpus) text += line("supported_gpu", g);
  for (const auto& a : set.acfs)
    text += line("acf", a.sha256 + " " + std::to_string(a.size) + " " + a.file);
  if (auto made = make_own_directory(join_path(cache_dir, "acf-candidates")); !made) return made.error();
  if (auto w = write_file_atomic(set_path(cache_dir, set.name), text); !w) return w.error();
  return set;
}

std::string acf_set_fits(const AcfCandidateSet& set, const std::string& ptxas_version, const std::string& target) {
  auto major_minor = [](const std::string& v) {
    auto first = v.find('.');
    if (first == std::string::npos) return v;
    auto second = v.find('.', first + 1);
    return v.substr(0, second);
  };
  if (!set.cuda_version.empty() && major_minor(set.cuda_version) != major_minor(ptxas_version))
    return "it is for CUDA " + set.cuda_version + ", and this ptxas is " + ptxas_version;
  if (!set.controls_stage.empty() && set.controls_stage != "ptxas")
    return "its controls are for the '" + set.controls_stage + "' stage, not ptxas";
  if (set.supported_gpus.empty()) return "";
  // The target with and without its feature suffix (sm_90a -> sm_90), its
  // compute capability (9.0), and the GPUs of that architecture by name.
  std::string arch = target;
  while (!arch.empty() && std::isalpha(static_cast<unsigned char>(arch.back()))) arch.pop_back();
  static const std::map<std::string, std::vector<std::string>> names = {
      {"sm_80", {"A100", "A30"}}, {"sm_86", {"A10", "A40", "RTX A6000"}}, {"sm_89", {"L4", "L40", "L40S"}},
      {"sm_90", {"H100", "H200", "GH200", "H800", "H20"}}, {"sm_100", {"B200", "GB200", "B100"}}, {"sm_120", {"RTX PRO 6000"}}};
  std::vector<std::string> accepted{target, arch};
  if (arch.size() > 4) accepted.push_back(arch.substr(3, arch.size() - 4) + "." + arch.substr(arch.size() - 1));
  if (auto it = names.find(arch); it != names.end()) accepted.insert(accepted.end(), it->second.begin(), it->second.end());
  auto upper = [](std::string v) {
    for (auto& c : v) c = char(std::toupper(static_cast<unsigned char>(c)));
    return v;
  };
  for (const auto& g : set.supported_gpus)
    for (const auto& a : accepted)
      if (upper(g) == upper(a) || upper(g).rfind(upper(a) + " ", 0) == 0) return "";
  std::string listed;
  for (const auto& g : set.supported_gpus) listed += (listed.empty() ? "" : ", ") + g;
  return "it supports " + listed + ", not " + target;
}

Result<AcfCandidateSet> load_acf_candidates(const std::string& cache_dir, const std::string& name) {
  if (!safe_set_name(name)) return make_error("invalid", "'" + name + "' is not an ACF candidate set name");
  std::string path = set_path(cache_dir, name);
  auto text = read_file(path);
  if (!text) return make_error("io", "no ACF candidate set '" + name + "' in " + cache_dir + " (import one with: ciq-cache import-acfs ZIP|DIR)");
  auto kv = parse_key_values(*text, path);
  if (!kv) return kv.error();
  AcfCandidateSet set;
  set.name = name;
  for (const auto& kv_line : *kv) {
    const std::string& value = kv_line.value;
    if (kv_line.key == "cuda_version") set.cuda_version = value;
    else if (kv_line.key == "controls_stage") set.controls_stage = value;
    else if (kv_line.key == "source") set.source = value;
    else if (kv_line.key == "supported_gpu") set.supported_gpus.push_back(value);
    else if (kv_line.key == "acf") {
      auto parts = split(value, ' ');
      if (parts.size() < 3 || parts[0].size() != 64) return make_error("parse", path + ":" + std::to_string(kv_line.line) + ": bad acf line");
      set.acfs.push_back({value.substr(parts[0].size() + parts[1].size() + 2), std::string(parts[0]),
                          std::size_t(std::strtoull(std::string(parts[1]).c_str(), nullptr, 10))});
    }
  }
  if (set.acfs.empty()) return make_error("parse", path + ": no ACFs");
  return set;
}

} // namespace ciq::cache
