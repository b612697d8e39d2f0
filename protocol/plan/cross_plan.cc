#include "protocol/plan/cross_plan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "protocol/findings/make_finding.h"

namespace yolo {
namespace {

std::string label(const Plan& p) {
  if (!p.phase.empty() || !p.plan.empty()) return p.id();
  return std::filesystem::path(p.path).filename().string();
}

// Index of the plan a dependency names, or -1.
int resolve_dep(const std::string& dep, size_t n, const std::vector<std::string>& norm_ids,
                const std::vector<std::string>& norm_plans) {
  std::string d = normalize_ref(dep);
  bool has_dash = d.find('-') != std::string::npos;
  for (size_t i = 0; i < n; ++i) {
    if (has_dash ? d == norm_ids[i] : d == norm_plans[i]) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::vector<std::vector<Finding>> cross_plan_findings(const std::vector<Plan>& plans) {
  std::vector<const Plan*> ptrs;
  ptrs.reserve(plans.size());
  for (const auto& p : plans) ptrs.push_back(&p);
  return cross_plan_findings(ptrs);
}

std::vector<std::vector<Finding>> cross_plan_findings(const std::vector<const Plan*>& plans) {
  struct View {  // the plans by index, without copying them
    const std::vector<const Plan*>& v;
    const Plan& operator[](size_t i) const { return *v[i]; }
  } phase{plans};
  const size_t n = plans.size();
  std::vector<std::vector<Finding>> out(n);
  std::vector<std::string> norm_ids(n), norm_plans(n);
  for (size_t i = 0; i < n; ++i) {
    norm_ids[i] = normalize_ref(phase[i].id());
    norm_plans[i] = normalize_ref(phase[i].plan);
  }
  // duplicate ids
  std::map<std::string, std::vector<size_t>> by_id;
  for (size_t i = 0; i < n; ++i)
    if (!phase[i].plan.empty()) by_id[norm_ids[i]].push_back(i);
  for (const auto& [id, idx] : by_id) {
    if (idx.size() < 2) continue;
    for (size_t i : idx) {
      json others = json::array();
      for (size_t j : idx)
        if (j != i) others.push_back(phase[j].path);
      Finding f =
          make_finding(Severity::High, "duplicate_id", "plan id " + phase[i].id() + " is used by another plan too",
                       "Give each plan of the phase its own plan number");
      f.extra["related"] = others;
      out[i].push_back(std::move(f));
    }
  }
  // dependencies: missing, self, wave order; build the graph
  std::vector<std::vector<int>> edges(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& dep : phase[i].depends_on) {
      int j = resolve_dep(dep, n, norm_ids, norm_plans);
      if (j < 0) {
        out[i].push_back(make_finding(
            Severity::High, "dependencies", "depends_on names '" + dep + "', which is not a plan of this phase",
            "Remove the dependency or name an existing plan (cross-phase: use cross_phase_deps)"));
        continue;
      }
      if (static_cast<size_t>(j) == i) {
        out[i].push_back(make_finding(Severity::High, "dependencies", "plan " + label(phase[i]) + " depends on itself",
                                      "Remove '" + dep + "' from depends_on", true));
        continue;
      }
      edges[i].push_back(j);
      const auto& wi = phase[i].wave;
      const auto& wj = phase[static_cast<size_t>(j)].wave;
      if (wi && wj && *wj >= *wi) {
        Finding f =
            make_finding(Severity::High, "wave_order",
                         "depends on " + label(phase[static_cast<size_t>(j)]) + " in wave " + std::to_string(*wj) +
                             ", not an earlier wave than this plan's wave " + std::to_string(*wi),
                         "Move this plan to wave " + std::to_string(*wj + 1) + " or later", true);
        out[i].push_back(std::move(f));
      }
    }
  }
  // cycles: iterative DFS with colours; each cycle found is reported to its members
  std::vector<int> colour(n, 0), parent(n, -1);
  std::set<std::set<int>> reported;
  for (size_t s = 0; s < n; ++s) {
    if (colour[s]) continue;
    std::vector<std::pair<int, size_t>> stack{{static_cast<int>(s), 0}};
    colour[s] = 1;
    while (!stack.empty()) {
      auto& [u, k] = stack.back();
      if (k < edges[static_cast<size_t>(u)].size()) {
        int v = edges[static_cast<size_t>(u)][k++];
        if (colour[static_cast<size_t>(v)] == 0) {
          colour[static_cast<size_t>(v)] = 1;
          parent[static_cast<size_t>(v)] = u;
          stack.push_back({v, 0});
        } else if (colour[static_cast<size_t>(v)] == 1) {
          std::vector<int> cyc{v};
          for (int w = u; w != v && w >= 0; w = parent[static_cast<size_t>(w)]) cyc.push_back(w);
          std::set<int> key(cyc.begin(), cyc.end());
          if (!reported.insert(key).second) continue;
          std::reverse(cyc.begin() + 1, cyc.end());
          std::string chain;
          for (int w : cyc) chain += label(phase[static_cast<size_t>(w)]) + " -> ";
          chain += label(phase[static_cast<size_t>(v)]);
          for (int w : cyc)
            out[static_cast<size_t>(w)].push_back(
                make_finding(Severity::High, "dependency_cycle", "dependency cycle: " + chain,
                             "Break the cycle: one of these plans must not depend on the other"));
        }
      } else {
        colour[static_cast<size_t>(u)] = 2;
        stack.pop_back();
      }
    }
  }
  // same-wave file overlap
  std::map<std::pair<long long, std::string>, std::vector<size_t>> touch;
  for (size_t i = 0; i < n; ++i) {
    if (!phase[i].wave) continue;
    std::set<std::string> mine;
    for (const auto& f : phase[i].files)
      if (!f.is_glob) mine.insert(std::filesystem::path(f.path).lexically_normal().string());
    for (const auto& f : mine) touch[{*phase[i].wave, f}].push_back(i);
  }
  for (const auto& [key, idx] : touch) {
    if (idx.size() < 2) continue;
    for (size_t i : idx) {
      std::string others;
      for (size_t j : idx)
        if (j != i) others += (others.empty() ? "" : ", ") + label(phase[j]);
      Finding f =
          make_finding(Severity::Medium, "file_overlap",
                       "wave " + std::to_string(key.first) + ": '" + key.second + "' is also modified by " + others,
                       "Move one of the plans to a later wave, or make it depend on the other");
      f.extra["path"] = key.second;
      out[i].push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace yolo
