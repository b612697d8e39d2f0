#include "protocol/gates/gate_coverage.h"

#include <algorithm>
#include <set>

#include "protocol/state/config.h"
#include "protocol/ports/contain.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/gates_detail.h"
#include "protocol/base/json_field.h"
#include "protocol/plan/plan.h"
#include "protocol/plan/plan_checks.h"
#include "protocol/base/sha256.h"

namespace yolo::gates {

namespace stdfs = std::filesystem;
using json_field::str;
using namespace detail;

// ---- what a gate covers ----------------------------------------------------------------

const std::vector<std::string>& cosmetic_config_keys() {
  // How fast and how much yolo reports; never what runs, what is judged or who approves.
  static const std::vector<std::string> keys = {"max_parallel", "v3_event_log", "watch.debounce_ms"};
  return keys;
}

const std::vector<std::string>& gate_config_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    const auto& cosmetic = cosmetic_config_keys();
    for (const auto& key : known_config_keys())
      if (std::find(cosmetic.begin(), cosmetic.end(), key) == cosmetic.end()) k.push_back(key);
    return k;
  }();
  return keys;
}

const std::string& signers_file() {
  static const std::string f = ".yolo-planning/allowed_signers";
  return f;
}

namespace {
const std::string kModelProfiles = ".yolo-planning/model-profiles.json";
}

const std::vector<CoverageRule>& coverage_rules() {
  static const std::vector<CoverageRule> rules = [] {
    std::string cosmetic;
    for (const auto& k : cosmetic_config_keys()) cosmetic += (cosmetic.empty() ? "`" : ", `") + k + "`";
    return std::vector<CoverageRule>{
        {"every gate",
         "the project (its canonical path; a signed approval: its first commit) and the run "
         "(`correlation_id`): an approval copied elsewhere does not count"},
        {"every gate", "the content (SHA-256) of the file it was requested for"},
        {"vision", "`.yolo-planning/ROADMAP.md`, by content"},
        {"vision",
         "every key of `config.json`, present or absent, except the cosmetic " + cosmetic +
             " (keys starting with `_` are comments yolo ignores; an unparseable config.json is covered whole)"},
        {"vision",
         "the content of every program a config argv names by a project-relative path (reviewer, "
         "architect, executor, approvers, dispatch adapters): editing the script re-opens the gate"},
        {"vision", "`" + kModelProfiles + "` (the model profiles), by content"},
        {"vision", "`" + signers_file() + "`, by content: only a version an approval covered verifies signatures"},
        {"vision",
         "with `wave_approval`, each phase's plan -> wave map and dependency graph (`waves:<phase>`): moving "
         "a plan to another wave or changing `depends_on` re-opens the gate"},
        {"wave",
         "the content of every plan of the wave, and of every program their `must_haves.checks` name by a "
         "project-relative path"},
        {"security / scope_change", "the content of the file named in the request"},
    };
  }();
  return rules;
}

std::string coverage_markdown() {
  std::string out = "| gate | covers |\n|---|---|\n";
  for (const auto& r : coverage_rules()) out += "| " + r.gate + " | " + r.what + " |\n";
  return out;
}

std::string config_value_digest(const json& v) {
  return sha256_digest(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

namespace {

// A config string that names a program or file by a project-relative path: not absolute,
// no placeholder, an existing regular file inside the project.
void named_programs(const World& w, const stdfs::path& root, const json& v, std::set<std::string>& out) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() > 4096 || s.front() == '/' || s.front() == '-' || s.find('{') != std::string::npos ||
        s.find('\n') != std::string::npos || s.find(' ') != std::string::npos)
      return;
    if (s.find('/') == std::string::npos && s.find('.') == std::string::npos) return;  // a name on PATH
    auto c = w.files().contain(root, s, fs::AbsolutePaths::Refuse);
    if (!c.ok() || c.rel == "." || !w.files().is_file(root / c.rel)) return;
    out.insert(c.rel);
  } else if (v.is_array() || v.is_object()) {
    for (const auto& x : v) named_programs(w, root, x, out);
  }
}

// "waves:<phase folder>" -> the digest of each plan's id, wave and depends_on, by plan file.
void wave_maps(const World& w, const stdfs::path& root, json& c) {
  const stdfs::path phases = root / ".yolo-planning" / "phases";
  std::vector<std::string> dirs = w.files().list(phases);
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    if (d.empty() || d.front() == '.' || !w.files().is_directory(phases / d)) continue;
    json map = json::array();
    for (const auto& f : list_plan_files(w, phases / d)) {
      auto l = load_plan(w, f);
      json row = json::array({f.filename().string()});
      if (l.plan) {
        const Plan& p = *l.plan;
        row.push_back(p.id());
        row.push_back(p.wave ? json(*p.wave) : json(nullptr));
        json deps = json::array();
        for (const auto& dep : p.depends_on) deps.push_back(dep);
        row.push_back(deps);
      }
      map.push_back(row);
    }
    if (!map.empty()) c["waves:" + d] = sha256_digest(map.dump());
  }
}

}  // namespace

std::vector<std::string> named_project_files(const World& w, const stdfs::path& root, const json& v) {
  std::set<std::string> out;
  named_programs(w, root, v, out);
  return {out.begin(), out.end()};
}

json coverage(const World& w, const stdfs::path& root, GateType type, const std::vector<std::string>& files) {
  json c = json::object();
  for (const auto& f : files) {
    if (f.empty()) continue;
    std::string rel = normalize_plan_path(w, root, f).value_or("");
    std::string d = rel.empty() ? std::string() : file_digest(w, root, rel).value_or("");
    c["file:" + (rel.empty() ? f : rel)] = d.empty() ? "absent" : d;
  }
  auto cover_file = [&](const std::string& rel) {
    std::string sd = file_digest(w, root, rel).value_or("");
    c["file:" + rel] = sd.empty() ? "absent" : sd;
  };
  if (type == GateType::Wave) {
    // The programs the wave's plans run as their checks (must_haves.checks), by content.
    std::set<std::string> programs;
    for (const auto& f : files) {
      if (!is_plan_filename(stdfs::path(f).filename().string())) continue;
      std::string rel = normalize_plan_path(w, root, f).value_or("");
      if (rel.empty()) continue;
      auto l = load_plan(w, root / rel);
      if (!l.plan) continue;
      for (const auto& spec : plan_checks::parse(*l.plan).checks) named_programs(w, root, json(spec.argv), programs);
    }
    for (const auto& p : programs) cover_file(p);
  }
  if (type == GateType::Vision) {
    // The project's signers: trusted only as a vision approval covered them (approvals.h).
    cover_file(signers_file());
    cover_file(kModelProfiles);
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
    const auto& cosmetic = cosmetic_config_keys();
    auto is_cosmetic = [&](const std::string& k) {
      return std::find(cosmetic.begin(), cosmetic.end(), k) != cosmetic.end();
    };
    for (const auto& k : gate_config_keys()) c["config:" + k] = "absent";
    for (auto& [k, v] : cfg.items()) {
      if (is_cosmetic(k) || (!k.empty() && k.front() == '_')) continue;  // "_comment", "_agent_templates"
      json val = v;
      if (val.is_object())
        for (auto it = val.begin(); it != val.end();)
          it = is_cosmetic(k + "." + it.key()) ? val.erase(it) : std::next(it);
      if (val.is_object() && val.empty() && !v.empty()) continue;  // only cosmetic sub-keys: as if absent
      c["config:" + k] = config_value_digest(val);
    }
    std::set<std::string> programs;
    for (auto& [k, v] : cfg.items())
      if (!is_cosmetic(k) && (k.empty() || k.front() != '_')) named_programs(w, root, v, programs);
    for (const auto& p : programs) cover_file(p);
    if (auto wa = cfg.find("wave_approval"); wa != cfg.end() && *wa == true) wave_maps(w, root, c);
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

stdfs::path approved_copies_dir(const stdfs::path& root) { return root / ".yolo-planning" / ".cache" / "approved"; }

namespace {
// The file name of a kept copy: the digest's hex, when it is one.
std::string copy_name(const std::string& digest) {
  constexpr std::string_view kPrefix = "sha256:";
  std::string_view h = digest;
  if (h.substr(0, kPrefix.size()) == kPrefix) h.remove_prefix(kPrefix.size());
  if (h.size() != 64 || h.find_first_not_of("0123456789abcdef") != std::string_view::npos) return {};
  return std::string(h);
}
}  // namespace

std::vector<std::string> keep_approved_copies(const World& w, const stdfs::path& root, const json& covers) {
  std::vector<std::string> errors;
  if (!covers.is_object()) return errors;
  const stdfs::path dir = approved_copies_dir(root);
  for (const auto& [k, v] : covers.items()) {
    if (k.rfind("file:", 0) != 0 || !v.is_string()) continue;
    std::string name = copy_name(v.get<std::string>());
    if (name.empty()) continue;  // "absent"
    std::error_code ec;
    if (stdfs::exists(dir / name, ec)) continue;
    std::string rel = k.substr(5);
    auto r = w.files().read(root / rel, 16u << 20, /*text=*/false);
    if (!r.ok() || sha256_hex(r.content) != name) continue;  // changed since: its copy is not the approved one
    stdfs::create_directories(dir, ec);
    if (Status s = fs::write_atomic(dir / name, r.content); !s.ok())
      errors.push_back("could not keep the approved text of " + rel + ": " + s.error);
  }
  return errors;
}

std::optional<std::string> approved_copy(const World& w, const stdfs::path& root, const std::string& digest) {
  std::string name = copy_name(digest);
  if (name.empty()) return std::nullopt;
  auto r = w.files().read(approved_copies_dir(root) / name, 16u << 20, /*text=*/false);
  if (!r.ok() || sha256_hex(r.content) != name) return std::nullopt;  // gone, or not what it says
  return r.content;
}

std::string project_id(const World& w, const stdfs::path& root) {
  std::error_code ec;
  stdfs::path abs = stdfs::absolute(root, ec).lexically_normal();
  return w.files().resolve(abs).value_or(abs).generic_string();
}

Result<std::string> normalize_plan_path(const World& w, const stdfs::path& root, const std::string& plan_path) {
  if (plan_path.empty()) return Status::fail("plan_path is empty");
  auto c = w.files().contain(root, plan_path, fs::AbsolutePaths::AllowInside);
  if (!c.ok()) {
    if (c.refusal == fs::Contained::Refusal::Symlink)
      return Status::fail(plan_path + " " + c.why() + " (" + root.string() + ")");
    return Status::fail(plan_path + " is outside the project " + root.string());
  }
  if (c.rel == ".") return Status::fail("plan_path '" + plan_path + "' names no file");
  return c.rel;
}

Result<std::string> file_digest(const World& w, const stdfs::path& root, const std::string& plan_path) {
  auto rel = normalize_plan_path(w, root, plan_path);
  if (!rel.ok()) return rel;
  auto r = w.files().read(root / *rel, 64u << 20, /*text=*/false);
  if (!r.ok()) return Status::fail(r.error->message);
  return sha256_digest(r.content);
}

}  // namespace yolo::gates
