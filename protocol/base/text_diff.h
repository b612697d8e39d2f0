// A unified diff of two texts, line by line (what `diff -u` prints), for showing people what
// an agent changed in a plan (`yolo watch --fix`: the architect's rewrite). Pure: texts in,
// text out.
#pragma once
#include <string>
#include <string_view>

namespace yolo::text {

// "--- from\n+++ to\n@@ -a,b +c,d @@\n..." with `context` unchanged lines around each change;
// empty when the texts are equal. Texts of more than `max_lines` lines each are shown as one
// hunk replacing the whole text (the line-by-line match costs their product).
std::string unified_diff(std::string_view before, std::string_view after, std::string_view from_label,
                         std::string_view to_label, int context = 3, size_t max_lines = 4000);

}  // namespace yolo::text
