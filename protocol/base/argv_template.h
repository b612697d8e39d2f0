// Argv templates from config: `{name}` placeholders replaced inside single argv elements.
// The result is only ever given to exec (never a shell), so values are literal text.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace yolo {

// Replaces each `{key}` found in vars, in every element; unknown `{...}` are left as is.
std::vector<std::string> expand_argv(const std::vector<std::string>& tmpl,
                                     const std::map<std::string, std::string>& vars);

}  // namespace yolo
