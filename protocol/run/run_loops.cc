#include "protocol/run/run_loops.h"

#include <cctype>

#include "protocol/run/execution.h"
#include "protocol/base/numbers.h"

namespace yolo::review {

std::optional<long long> leading_number(const std::string& s) { return text::leading_number(s); }

bool put_run_loop(json& state, long long phase, const std::string& plan_id, json entry) {
  if (!execution::has_run(state)) return false;
  if (phase > 0)
    if (auto p = state.find("phase"); p != state.end() && p->is_number_integer() && p->get<long long>() != phase)
      return false;
  if (!state.contains("review_loops") || !state["review_loops"].is_object()) state["review_loops"] = json::object();
  state["review_loops"][plan_id] = std::move(entry);
  return true;
}

}  // namespace yolo::review
