// Request encoding and answer-status reading for resident benchmarks
// (bench_protocol.h). Everything a server writes is outside input: the
// status line is read strictly (canonical decimals, bounded length, range
// checked) so that no spelling of a number turns into another one.
#include "tuner/measure/bench_protocol.h"

#include "utils/text.h"

#include <cstdint>
#include <optional>

namespace ciq::tuner {

namespace {

/// A canonical unsigned decimal (no sign, no leading zero) that fits in 64 bits.
std::optional<std::uint64_t> canonical_unsigned(std::string_view s) {
  if (s.empty() || (s.front() == '0' && s.size() > 1)) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    std::uint64_t digit = std::uint64_t(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

} // namespace

Result<std::string> encode_request(std::uint64_t id, const std::vector<std::string>& words) {
  std::string message = std::string(k_request_prefix) + std::to_string(id) + "\n";
  for (const auto& w : words) {
    if (w.empty() || w.find('\n') != std::string::npos)
      return make_error(ciq::errc::usage, "a benchmark server request cannot hold an empty word or a newline");
    message += w + "\n";
  }
  return message + "\n";
}

std::string server_text_excerpt(std::string_view text) {
  std::string shown;
  for (char c : text.substr(0, 60)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > 60 ? shown + "..." : shown;
}

Result<int> read_answer_status(std::string_view rest, std::uint64_t id) {
  std::string line = std::string(k_status_prefix) + server_text_excerpt(rest);
  std::string_view text = trim(rest); // a CR of a server that writes CRLF, or a trailing space
  std::size_t space = text.find(' ');
  if (space == std::string_view::npos) {
    if (parse_integer(text))
      return make_error("garbled", "answered '" + line +
                                       "' without its request's id: requests now start with a line `ciq-request: ID`, "
                                       "and the answer's last line must be `ciq-status: ID STATUS` (update the server; "
                                       "see docs/tuning.md, 'Resident benchmarks')");
    return make_error("garbled", "answered '" + line + "', not `ciq-status: ID STATUS`");
  }
  auto answered = canonical_unsigned(text.substr(0, space));
  std::string_view status_text = trim(text.substr(space + 1));
  auto status = canonical_unsigned(status_text);
  if (!answered || !status || *status > 255)
    return make_error("garbled", "answered '" + line + "', not `ciq-status: ID STATUS` (ID the request's, STATUS 0-255)");
  if (*answered != id)
    return make_error("garbled", "answered request " + std::to_string(*answered) + " when asked request " +
                                     std::to_string(id) + " (an extra or late answer)");
  return int(*status);
}

} // namespace ciq::tuner
