// The `--bench-server` wire protocol, the tuner's end (ciq.protocol is the
// Python one). A request is a first line `ciq-request: ID`, then its words
// one per line, then an empty line; the answer is the server's output, then
// a last line `ciq-status: ID STATUS` that echoes the request's ID. The ID
// ties an answer to its request: a server that answers twice, or late,
// shows it by an ID that is not the one asked, instead of handing one
// candidate's value to the next.
#pragma once

#include "utils/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

inline constexpr std::string_view k_request_prefix = "ciq-request: ";
inline constexpr std::string_view k_status_prefix = "ciq-status: ";

/// The request's bytes: `ciq-request: ID`, the words one per line, an empty
/// line. Fails ("usage") for an empty word or one holding a newline, which
/// the server could not tell from the request's end.
Result<std::string> encode_request(std::uint64_t id, const std::vector<std::string>& words);

/// The STATUS of an answer to request `id`, read from its last line without
/// the prefix (`rest` of `ciq-status: rest`): `ID STATUS`, ID the request's
/// in decimal, STATUS an exit status 0-255. Fails ("garbled") with a message
/// that completes "the benchmark server ...": for a line with a STATUS only
/// (a server of the protocol before request ids) it names the change; for
/// another request's ID it says the answer was extra or late.
Result<int> read_answer_status(std::string_view rest, std::uint64_t id);

/// A server's text as a message shows it: at most 60 bytes, control and
/// non-ASCII bytes as '?'.
std::string server_text_excerpt(std::string_view text);

} // namespace ciq::tuner
