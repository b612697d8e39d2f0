#include "protocol/run_loops.h"

#include <cctype>

namespace yolo::review {

std::optional<long long> leading_number(const std::string& s) {
  size_t i = 0;
  long long v = 0;
  while (i < s.size() && i < 9 && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + (s[i++] - '0');
  if (i == 0) return std::nullopt;
  return v;
}

bool put_run_loop(json& state, long long phase, const std::string& plan_id, json entry) {
  if (phase > 0) {
    if (auto p = state.find("phase"); p != state.end() && p->is_number_integer()) {
      if (p->get<long long>() != phase) return false;
    } else if (auto rl = state.find("review_loops"); rl != state.end() && rl->is_object()) {
      for (auto it = rl->begin(); it != rl->end();) {
        auto n = leading_number(it.key());
        if (n && *n != phase) it = rl->erase(it);
        else ++it;
      }
    }
  }
  if (!state.contains("review_loops") || !state["review_loops"].is_object()) state["review_loops"] = json::object();
  state["review_loops"][plan_id] = std::move(entry);
  return true;
}

}  // namespace yolo::review
