// The status line of a resident benchmark's answer (--bench-server) as the
// tuner reads it: the input's first line is the id asked (7 when it is not
// a number), the rest the text after `ciq-status: `. A status that reads is
// 0-255 and reads back from the line the tuner would expect; no other id
// reads it. The excerpt a message shows is short and printable; a request
// encodes only words the server can tell apart.
#include "tuner/measure/bench_protocol.h"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t nl = text.find('\n');
  std::string_view first = text.substr(0, nl), rest = nl == std::string_view::npos ? text : text.substr(nl + 1);
  std::uint64_t id = 7;
  if (auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), id); ec != std::errc() || end != first.data() + first.size())
    id = 7;

  if (auto status = ciq::tuner::read_answer_status(rest, id)) {
    if (*status < 0 || *status > 255) std::abort();
    auto again = ciq::tuner::read_answer_status(std::to_string(id) + " " + std::to_string(*status), id);
    if (!again || *again != *status) std::abort();
    if (ciq::tuner::read_answer_status(rest, id + 1)) std::abort();
  } else if (status.error().code != "garbled" || status.error().message.size() > 600) {
    std::abort();
  }

  std::string shown = ciq::tuner::server_text_excerpt(rest);
  if (shown.size() > 63) std::abort();
  for (char c : shown)
    if (c < 0x20 || c > 0x7e) std::abort();

  std::vector<std::string> words;
  std::string word;
  for (char c : rest) {
    if (c == '\0') words.push_back(std::move(word)), word.clear();
    else word += c;
  }
  words.push_back(word);
  bool plain = true;
  for (const auto& w : words) plain = plain && !w.empty() && w.find('\n') == std::string::npos;
  auto message = ciq::tuner::encode_request(id, words);
  if (message.ok() != plain) std::abort();
  if (message && (message->size() < 2 || message->compare(message->size() - 2, 2, "\n\n") != 0)) std::abort();
  return 0;
}
