#include "cache/pack.h"

#include "utils/hash.h"
#include "utils/text.h"

#include <cstring>
#include <sodium.h>

namespace ciq::cache {

namespace {

bool is_hex(std::string_view s, std::size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

} // namespace

// Base64 through libsodium (the standard alphabet, with padding).
std::string base64_encode(std::string_view bytes) {
  std::string out(sodium_base64_encoded_len(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  out.pop_back(); // the terminating NUL
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4) return make_error("parse", "base64 length is not a multiple of 4");
  std::string out(text.size() / 4 * 3, '\0');
  std::size_t written = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(), text.size(), nullptr,
                        &written, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size())
    return make_error("parse", "not base64 (a character outside the alphabet, or padding in the middle)");
  out.resize(written);
  return out;
}

std::string format_pack(const Pack& pack) {
  std::string body;
  for (const auto& [key, record] : pack.entries) {
    body += "--- entry " + to_hex(key) + "\n" + record;
    if (!record.empty() && record.back() != '\n') body += '\n';
  }
  for (const auto& [digest, bytes] : pack.blobs) {
    body += "--- blob " + to_hex(digest) + " " + std::to_string(bytes.size()) + "\n";
    std::string encoded = base64_encode(bytes);
    for (std::size_t i = 0; i < encoded.size(); i += 76) body += encoded.substr(i, 76) + "\n";
  }
  body += "--- end\n";
  return "# ciq pack: tuned compiler controls; review like code\n" + format_key_value("format", k_pack_format) + "\n" +
         format_key_value("entries", std::to_string(pack.entries.size())) + "\n" +
         format_key_value("blobs", std::to_string(pack.blobs.size())) + "\n" +
         format_key_value("checksum", "sha256:" + to_hex(sha256(body))) + "\n\n" + body;
}

Result<Pack> parse_pack(std::string_view text, std::string_view origin) {
  auto fail = [&](const std::string& why) { return make_error("pack", std::string(origin) + ": " + why); };
  auto body_at = text.find("\n--- ");
  if (body_at == std::string_view::npos) return fail("not a ciq pack (no entries section; truncated?)");
  auto header = parse_key_values(text.substr(0, body_at + 1), origin);
  if (!header) return header.error();
  std::string format, checksum;
  long long entries = -1, blobs = -1;
  for (const auto& kv : *header) {
    if (kv.key == "format") format = kv.value;
    else if (kv.key == "checksum") checksum = kv.value;
    else if (kv.key == "entries") entries = parse_integer(kv.value).value_or(-2);
    else if (kv.key == "blobs") blobs = parse_integer(kv.value).value_or(-2);
    else return fail("unknown header key '" + kv.key + "'");
  }
  if (format != k_pack_format) return fail("unsupported format '" + format + "' (this ciq reads " + std::string(k_pack_format) + ")");
  std::string_view body = text.substr(body_at + 1);
  if (checksum != "sha256:" + to_hex(sha256(body)))
    return fail("checksum mismatch: the pack was truncated or edited by hand (re-export it)");
  if (body.size() < 8 || body.substr(body.size() - 8) != "--- end\n") return fail("no '--- end' line (truncated?)");

  Pack pack;
  auto lines = split(body.substr(0, body.size() - 8), '\n');
  std::size_t i = 0;
  while (i < lines.size()) {
    std::string_view line = lines[i];
    if (line.empty() && i + 1 == lines.size()) break;
    if (!starts_with(line, "--- ")) return fail("expected a '--- entry' or '--- blob' line, got '" + std::string(line.substr(0, 60)) + "'");
    auto words = split(line.substr(4), ' ');
    std::size_t j = i + 1;
    std::string content;
    while (j < lines.size() && !starts_with(lines[j], "--- ")) {
      if (!(lines[j].empty() && j + 1 == lines.size())) {
        content.append(lines[j]);
        content += '\n';
      }
      ++j;
    }
    if (words.size() == 2 && words[0] == "entry") {
      std::string key(words[1]);
      if (!is_hex(key, 32)) return fail("entry key '" + key + "' is not 32 hex digits");
      if (content.size() > k_max_record_bytes) return fail("entry " + key + " is larger than " + std::to_string(k_max_record_bytes) + " bytes");
      if (!pack.entries.emplace(*parse_digest<16>(key), content).second) return fail("entry " + key + " appears twice");
    } else if (words.size() == 3 && words[0] == "blob") {
      std::string digest(words[1]);
      auto size = parse_integer(words[2]);
      if (!is_hex(digest, 64)) return fail("blob digest '" + digest + "' is not 64 hex digits");
      if (!size || *size < 0 || std::size_t(*size) > k_max_blob_bytes)
        return fail("blob " + digest.substr(0, 12) + " is larger than " + std::to_string(k_max_blob_bytes) + " bytes");
      std::string encoded;
      for (char c : content)
        if (c != '\n') encoded += c;
      auto bytes = base64_decode(encoded);
      if (!bytes) return fail("blob " + digest.substr(0, 12) + ": " + bytes.error().message);
      if (bytes->size() != std::size_t(*size)) return fail("blob " + digest.substr(0, 12) + " has the wrong size");
      if (to_hex(sha256(*bytes)) != digest) return fail("blob " + digest.substr(0, 12) + " does not match its sha256");
      pack.blobs.emplace(*parse_digest<32>(digest), std::move(*bytes));
    } else {
      return fail("malformed section line '" + std::string(line.substr(0, 60)) + "'");
    }
    i = j;
  }
  if (entries != (long long)pack.entries.size() || blobs != (long long)pack.blobs.size())
    return fail("the header's counts do not match the content");
  return pack;
}

} // namespace ciq::cache
