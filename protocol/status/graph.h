// The plan graph of a project as text a renderer draws: Mermaid (GitHub, editors)
// and Graphviz DOT (`dot -Tsvg`). One cluster per phase, plans grouped by wave, an edge per
// depends_on. Pure: the caller lists the phases and resolves the dependencies.
#pragma once
#include <string>
#include <vector>

namespace yolo::graph {

struct Plan {
  std::string id;  // "01-03"
  std::string title;
  long long wave = 0;  // < 1: invalid
  bool complete = false;
  std::vector<std::string> depends_on;  // ids of plans of the same phase
};

struct Phase {
  std::string folder;  // "01-setup"
  std::vector<Plan> plans;
};

std::string mermaid(const std::vector<Phase>& phases);
std::string dot(const std::vector<Phase>& phases);

}  // namespace yolo::graph
