#include "protocol/status/graph.h"

#include <cctype>
#include <map>
#include <sstream>

namespace yolo::graph {
namespace {

// A node id both languages accept: letters, digits and '_'.
std::string node_id(const std::string& phase, const std::string& id) {
  std::string s = "p_";
  for (char c : phase + "__" + id) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

// Label text: no control characters, no line breaks, bounded.
std::string clean(const std::string& t, size_t max = 60) {
  std::string s;
  for (unsigned char c : t) s += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    s = s.substr(0, cut) + "...";
  }
  return s;
}

std::string mermaid_text(const std::string& t) {
  std::string s;
  for (char c : clean(t)) {
    if (c == '"')
      s += "#quot;";
    else if (c == '<')
      s += "#lt;";
    else if (c == '>')
      s += "#gt;";
    else
      s += c;
  }
  return s;
}

std::string dot_text(const std::string& t) {
  std::string s;
  for (char c : clean(t)) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s;
}

std::map<long long, std::vector<const Plan*>> by_wave(const Phase& p) {
  std::map<long long, std::vector<const Plan*>> m;
  for (const auto& pl : p.plans) m[pl.wave].push_back(&pl);
  return m;
}

}  // namespace

std::string mermaid(const std::vector<Phase>& phases) {
  std::ostringstream o;
  o << "flowchart TD\n";
  for (const auto& ph : phases) {
    std::string pid = node_id(ph.folder, "");
    o << "  subgraph " << pid << "[\"" << mermaid_text("Phase " + ph.folder) << "\"]\n";
    for (const auto& [w, plans] : by_wave(ph)) {
      std::string wid = node_id(ph.folder, "wave" + std::to_string(w));
      o << "    subgraph " << wid << "[\"" << (w >= 1 ? "Wave " + std::to_string(w) : std::string("no valid wave"))
        << "\"]\n";
      for (const Plan* p : plans)
        o << "      " << node_id(ph.folder, p->id) << "[\"" << mermaid_text(p->id + ": " + p->title)
          << (p->complete ? " ✓" : "") << "\"]\n";
      o << "    end\n";
    }
    o << "  end\n";
    for (const auto& p : ph.plans)
      for (const auto& d : p.depends_on)
        o << "  " << node_id(ph.folder, d) << " --> " << node_id(ph.folder, p.id) << "\n";
    for (const auto& p : ph.plans)
      if (p.complete) o << "  class " << node_id(ph.folder, p.id) << " done\n";
  }
  o << "  classDef done fill:#d4f7d4,stroke:#2e7d32\n";
  return o.str();
}

std::string dot(const std::vector<Phase>& phases) {
  std::ostringstream o;
  o << "digraph yolo {\n  rankdir=TB;\n  compound=true;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  for (const auto& ph : phases) {
    o << "  subgraph cluster_" << node_id(ph.folder, "") << " {\n    label=\"" << dot_text("Phase " + ph.folder)
      << "\";\n";
    for (const auto& [w, plans] : by_wave(ph)) {
      o << "    subgraph cluster_" << node_id(ph.folder, "wave" + std::to_string(w)) << " {\n      label=\""
        << (w >= 1 ? "Wave " + std::to_string(w) : std::string("no valid wave")) << "\";\n      style=dashed;\n";
      for (const Plan* p : plans)
        o << "      " << node_id(ph.folder, p->id) << " [label=\"" << dot_text(p->id + ": " + p->title) << "\""
          << (p->complete ? ", style=\"rounded,filled\", fillcolor=\"#d4f7d4\"" : "") << "];\n";
      o << "    }\n";
    }
    o << "  }\n";
    for (const auto& p : ph.plans)
      for (const auto& d : p.depends_on)
        o << "  " << node_id(ph.folder, d) << " -> " << node_id(ph.folder, p.id) << ";\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace yolo::graph
