// Small string helpers shared by the parsers. Pure functions, no allocation surprises.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace yolo::text {

std::string_view trim(std::string_view s);
std::string_view rtrim(std::string_view s);
bool starts_with_ci(std::string_view s, std::string_view prefix);
// Splits on '\n', dropping a trailing '\r' from each line (CRLF tolerant).
std::vector<std::string_view> lines(std::string_view s);
// Comma split, each part trimmed, empty parts dropped.
std::vector<std::string> split_csv(std::string_view s);
// The last n lines of s (whole s when it has fewer).
std::string tail_lines(std::string_view s, size_t n);
// True when s is valid UTF-8.
bool valid_utf8(std::string_view s);
std::string to_lower(std::string_view s);
// Text for a terminal: control characters that a terminal would act on are replaced by a
// visible placeholder, so plan-derived text cannot inject escape sequences. C0 controls
// except '\n' and '\t' become caret notation (ESC -> "^[", BEL -> "^G", CR -> "^M"), DEL
// becomes "^?", C1 controls U+0080..U+009F (encoded as C2 80..C2 9F) become "?", and bytes
// that are not part of valid UTF-8 become "?" (an 8-bit terminal would read 0x9B as CSI).
// Everything else, including other multi-byte characters, is kept as is.
std::string sanitize_for_terminal(std::string_view s);

// Edit distance (insert, delete, substitute, swap of two neighbours count 1).
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate nearest to `word` when it is near enough to be a typo (distance at most
// max(1, size/3), or the word is a prefix of it); empty when none is.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// s cut to at most max bytes, never inside a UTF-8 character, with "…" added when it was cut.
std::string cut(std::string_view s, size_t max);

// "a, b, c, ... (N more)": the first `max` items joined with ", ", then how many were left out.
std::string join_some(const std::vector<std::string>& items, size_t max = 10);

}  // namespace yolo::text
