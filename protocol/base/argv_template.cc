#include "protocol/base/argv_template.h"

namespace yolo {

std::vector<std::string> expand_argv(const std::vector<std::string>& tmpl,
                                     const std::map<std::string, std::string>& vars) {
  std::vector<std::string> out;
  out.reserve(tmpl.size());
  for (const auto& el : tmpl) {
    std::string r;
    size_t i = 0;
    while (i < el.size()) {
      if (el[i] == '{') {
        size_t close = el.find('}', i + 1);
        if (close != std::string::npos) {
          auto it = vars.find(el.substr(i + 1, close - i - 1));
          if (it != vars.end()) {
            r += it->second;  // substituted text is never rescanned
            i = close + 1;
            continue;
          }
        }
      }
      r += el[i++];
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace yolo
