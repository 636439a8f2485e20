// Pack files: a team's tuned results as one reviewable text file, committed
// next to the kernels. Deterministic (entries sorted by key, blobs by
// digest) so that two exports of the same cache are byte-identical and a
// diff shows exactly what changed. A sha256 over the body guards against
// truncation and tampering; every entry is still validated like a local
// one when it is imported.
//
//   # ciq pack: tuned compiler controls; review like code
//   format = ciq-pack/1
//   entries = 2
//   blobs = 0
//   checksum = sha256:<64 hex digits of everything below the header>
//
//   --- entry 0436309f319d67cd1e772d984e9ca899
//   format = ciq-record/1
//   ...
//   --- blob 959cb015...c3 12
//   b3BhcXVlIGJsb2IK
//   --- end
#pragma once

#include "utils/hash.h"
#include "utils/result.h"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace ciq::cache {

inline constexpr std::string_view k_pack_format = "ciq-pack/1";
inline constexpr std::size_t k_max_record_bytes = 64 << 10;
inline constexpr std::size_t k_max_blob_bytes = 16 << 20;

struct Pack {
  std::map<Hash128, std::string> entries; // key -> record text
  std::map<Sha256, std::string> blobs;    // sha256 -> bytes
};

/// The pack's text form.
std::string format_pack(const Pack& pack);

/// Parses and checks a pack: format, header counts, checksum, sizes, key
/// and digest syntax, and that each blob's content matches its digest.
/// Records are not interpreted here (see the importer).
Result<Pack> parse_pack(std::string_view text, std::string_view origin);

std::string base64_encode(std::string_view bytes);
/// Strict: fails on characters outside the alphabet or bad padding.
Result<std::string> base64_decode(std::string_view text);

} // namespace ciq::cache
