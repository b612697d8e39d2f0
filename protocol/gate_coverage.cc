#include "protocol/gate_coverage.h"

#include "protocol/contain.h"
#include "protocol/gates_detail.h"
#include "protocol/json_field.h"
#include "protocol/sha256.h"

namespace yolo::gates {

namespace stdfs = std::filesystem;
using json_field::str;
using namespace detail;

// ---- what a gate covers ----------------------------------------------------------------

const std::vector<std::string>& gate_config_keys() {
  static const std::vector<std::string> keys = {
      "approvers", "review_gate", "reviewer", "architect", "executor", "summary_checks", "mcp_can_approve",
      "wave_approval", "review_max_cycles", "command_timeout_ms",
      // What runs plans and what judges their result: a dispatch submit template runs any
      // program, and scope_fence "off" / isolation "none" / reviewer_required false weaken a gate.
      "dispatch", "isolation", "scope_fence", "reviewer_required",
      // What confines them: "sandbox": "off" runs every agent with the person's full power.
      "sandbox"};
  return keys;
}

json coverage(const World& w, const stdfs::path& root, GateType type, const std::vector<std::string>& files) {
  json c = json::object();
  for (const auto& f : files) {
    if (f.empty()) continue;
    std::string err;
    std::string rel = normalize_plan_path(w, root, f, err);
    std::string d = rel.empty() ? std::string() : file_digest(w, root, rel, err);
    c["file:" + (rel.empty() ? f : rel)] = d.empty() ? "absent" : d;
  }
  if (type == GateType::Vision) {
    auto r = w.files().read(root / ".yolo-planning" / "config.json", 16u << 20, /*text=*/false);
    json cfg = json::object();
    if (r.ok()) {
      JsonParse parsed = parse_json_bounded(r.content);
      if (!parsed.ok() || !parsed.doc.is_object()) {
        c["config:config.json"] = sha256_digest(r.content);
        return c;
      }
      cfg = std::move(parsed.doc);
    }
    for (const auto& k : gate_config_keys()) {
      auto it = cfg.find(k);
      c["config:" + k] = it == cfg.end() ? std::string("absent")
                                         : sha256_digest(it->dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  return c;
}

std::vector<std::string> covered_files(const json& gate) {
  std::vector<std::string> files;
  std::string plan = str(gate, "plan_path");
  if (!plan.empty()) files.push_back(plan);
  if (gate.is_object())
    if (auto it = gate.find("covers"); it != gate.end() && it->is_object())
      for (auto& [k, v] : it->items())
        if (k.rfind("file:", 0) == 0 && k.substr(5) != plan) files.push_back(k.substr(5));
  return files;
}

std::vector<std::string> coverage_changes(const json& before, const json& after) {
  std::vector<std::string> out;
  json b = before.is_object() ? before : json::object(), a = after.is_object() ? after : json::object();
  auto name = [](const std::string& k) {
    if (k.rfind("file:", 0) == 0) return k.substr(5);
    if (k.rfind("config:", 0) == 0) return "config key " + k.substr(7);
    return k;
  };
  auto val = [](const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
  for (auto& [k, v] : a.items()) {
    auto it = b.find(k);
    if (it == b.end())
      out.push_back(name(k) + " added (" + short_digest(val(v)) + ")");
    else if (*it != v) {
      std::string was = val(*it), now = val(v);
      if (now == "absent")
        out.push_back(name(k) + " removed");
      else if (was == "absent")
        out.push_back(name(k) + " set (" + short_digest(now) + ")");
      else
        out.push_back(name(k) + " changed (" + short_digest(was) + " -> " + short_digest(now) + ")");
    }
  }
  for (auto& [k, v] : b.items())
    if (!a.contains(k)) out.push_back(name(k) + " no longer covered");
  return out;
}

std::string project_id(const World& w, const stdfs::path& root) {
  std::error_code ec;
  stdfs::path abs = stdfs::absolute(root, ec).lexically_normal();
  return w.files().resolve(abs).value_or(abs).generic_string();
}

std::string normalize_plan_path(const World& w, const stdfs::path& root, const std::string& plan_path,
                                std::string& err) {
  if (plan_path.empty()) {
    err = "plan_path is empty";
    return {};
  }
  auto c = w.files().contain(root, plan_path, fs::AbsolutePaths::AllowInside);
  if (!c.ok()) {
    if (c.refusal == fs::Contained::Refusal::Symlink)
      err = plan_path + " " + c.why() + " (" + root.string() + ")";
    else
      err = plan_path + " is outside the project " + root.string();
    return {};
  }
  if (c.rel == ".") {
    err = "plan_path '" + plan_path + "' names no file";
    return {};
  }
  return c.rel;
}

std::string file_digest(const World& w, const stdfs::path& root, const std::string& plan_path, std::string& err) {
  std::string rel = normalize_plan_path(w, root, plan_path, err);
  if (rel.empty()) return {};
  auto r = w.files().read(root / rel, 64u << 20, /*text=*/false);
  if (!r.ok()) {
    err = r.error->message;
    return {};
  }
  return sha256_digest(r.content);
}

}  // namespace yolo::gates
