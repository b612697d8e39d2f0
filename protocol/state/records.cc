#include "protocol/state/records.h"

#include <algorithm>
#include <optional>

#include "protocol/plan/plan.h"

namespace yolo::records {
namespace {

struct Fingerprint {
  const char* kind;
  std::vector<const char*> keys;  // distinctive top-level keys of the unwrapped record
};

// Keys that, two at a time, identify an unwrapped record. Generic keys (id, type,
// timestamp, name) are left out on purpose.
const std::vector<Fingerprint>& fingerprints() {
  static const std::vector<Fingerprint> f = {
      {"evidence", {"claim", "verified_by", "verification_method"}},
      {"handoff", {"from_agent", "to_agent", "context"}},
      {"review_gate", {"criteria_checked", "approved", "action"}},
      {"conflict", {"parties", "positions", "acknowledged"}},
      {"metrics", {"workflow_id", "total_time_min", "stages", "quality"}},
      {"skill", {"purpose", "interface", "tested"}},
      {"startup", {"mcp_verified", "scheduler_active", "memory_ok", "env_ready"}},
      {"recovery", {"rollback_to", "resume_stage", "state_before", "state_after"}},
  };
  return f;
}

bool has_objective(const json& doc) {
  auto m = doc.find("metadata");
  return m != doc.end() && m->is_object() && m->contains("objective");
}

}  // namespace

const std::vector<std::string>& kinds() {
  static const std::vector<std::string> k = {"evidence", "handoff", "review_gate", "conflict", "metrics",
                                             "skill",    "startup", "recovery",    "todo"};
  return k;
}

bool is_kind(std::string_view kind) {
  const auto& k = kinds();
  return std::find(k.begin(), k.end(), kind) != k.end();
}

std::string schema_for_kind(std::string_view kind) {
  std::string s(kind);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::optional<std::string> kind_for_schema(std::string_view schema) {
  std::string k(schema);
  std::replace(k.begin(), k.end(), '-', '_');
  if (is_kind(k)) return k;
  return std::nullopt;
}

std::optional<Detected> detect(const json& doc) {
  if (!doc.is_object()) return std::nullopt;
  // 1. An unwrapped record, by its own keys: the kind with the most distinctive keys (>= 2).
  const Fingerprint* best = nullptr;
  size_t best_hits = 1;
  for (const auto& f : fingerprints()) {
    size_t hits = 0;
    for (const char* key : f.keys) hits += doc.contains(key) ? 1 : 0;
    if (hits > best_hits) {
      best = &f;
      best_hits = hits;
    }
  }
  if (best) return Detected{best->kind, doc, false};
  // 2. The seed's wrapper keys, in its order.
  for (const auto& k : kinds()) {
    if (k == "todo") break;
    auto it = doc.find(k);
    if (it == doc.end()) continue;
    if (it->is_object()) return Detected{k, *it, true};
    return Detected{k, doc, false};  // the seed detects it but cannot unwrap: validate as is
  }
  // 3. todo: metadata.objective, wrapped ({"todo": {...}}) or not.
  if (auto t = doc.find("todo"); t != doc.end() && t->is_object() && has_objective(*t))
    return Detected{"todo", *t, true};
  if (has_objective(doc)) return Detected{"todo", doc, false};
  return std::nullopt;
}

json unwrap(std::string_view kind, const json& doc) {
  if (doc.is_object()) {
    auto it = doc.find(std::string(kind));
    if (it != doc.end() && it->is_object()) return *it;
  }
  return doc;
}

const std::vector<std::string>& stages() {
  static const std::vector<std::string> s = {"PLAN", "REVIEW", "DISRUPT", "IMPLEMENT", "TEST", "VALIDATE", "LEARN"};
  return s;
}

std::optional<std::string> stage_name(std::string_view stage) {
  std::string up;
  for (char c : stage) up += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  for (const auto& s : stages())
    if (s == up) return s;
  return std::nullopt;
}

std::vector<std::string> gate_requirements(std::string_view stage) {
  auto s = stage_name(stage);
  if (!s) return {};
  if (*s == "PLAN") return {"todo", "evidence"};
  if (*s == "REVIEW") return {"review_gate", "evidence"};
  if (*s == "DISRUPT") return {"conflict", "evidence"};
  if (*s == "IMPLEMENT") return {"todo", "evidence"};
  if (*s == "TEST") return {"evidence", "metrics"};
  if (*s == "VALIDATE") return {"review_gate", "evidence"};
  return {"skill", "metrics"};  // LEARN
}

GateResult gate_check(std::string_view stage, const std::vector<GateOutput>& outputs) {
  GateResult r;
  auto name = stage_name(stage);
  r.stage = name ? *name : std::string(stage);
  if (!name) {
    r.errors.push_back("Unknown stage: " + std::string(stage));
    return r;
  }
  r.required = gate_requirements(*name);
  for (const auto& o : outputs) {
    RecordCheck c;
    c.source = o.source;
    if (auto d = detect(o.doc)) {
      c.kind = d->kind;
      c.errors = tidy(schema::validate(schema_for_kind(d->kind), d->record), d->wrapped ? "/" + d->kind : "");
      if (std::find(r.checked.begin(), r.checked.end(), d->kind) == r.checked.end()) r.checked.push_back(d->kind);
      for (const auto& e : c.errors)
        r.errors.push_back(o.source + ": " + (e.pointer.empty() ? "(document)" : e.pointer) + ": " + e.message);
    }
    r.records.push_back(std::move(c));
  }
  for (const auto& req : r.required) {
    if (std::find(r.checked.begin(), r.checked.end(), req) == r.checked.end()) {
      r.missing.push_back(req);
      r.errors.push_back("Missing required: " + req);
    }
  }
  return r;
}

SchemaChoice detect_schema(const std::filesystem::path& file, const json& doc) {
  SchemaChoice c;
  c.document = doc;
  const std::string name = file.filename().string();
  if (name == ".execution-state.json") {
    c.schema = "execution-state";
    c.reason = "file name";
    return c;
  }
  if (file.parent_path().filename() == ".reviews" && file.extension() == ".json") {
    c.schema = "review-ledger";
    c.reason = "file name";
    return c;
  }
  if (name == "config.json") {
    c.schema = "config";
    c.reason = "file name";
    return c;
  }
  if (is_plan_filename(name)) {
    c.schema = "plan-frontmatter";
    c.reason = "file name";
    return c;
  }
  if (is_summary_filename(name)) {
    c.schema = "summary-frontmatter";
    c.reason = "file name";
    return c;
  }
  if (auto d = detect(doc)) {
    c.schema = schema_for_kind(d->kind);
    c.kind = d->kind;
    c.document = d->record;
    if (d->wrapped) c.prefix = "/" + d->kind;
    c.reason = d->wrapped ? "record kind (wrapped)" : "record kind";
    return c;
  }
  if (doc.is_object()) {
    auto type = doc.find("type");
    if (type != doc.end() && type->is_string() && doc.contains("payload")) {
      c.schema = *type == "hitl_approval" ? "hitl-approval" : "message-roles";
      c.reason = "typed message";
      return c;
    }
  }
  c.reason = "no workflow record keys, not a typed message, no known file name";
  return c;
}

Prepared prepare(std::string_view schema, const json& doc) {
  if (auto kind = kind_for_schema(schema)) {
    if (doc.is_object()) {
      auto it = doc.find(*kind);
      if (it != doc.end() && it->is_object()) return Prepared{*it, "/" + *kind};
    }
  }
  return Prepared{doc, ""};
}

std::vector<schema::Error> tidy(std::vector<schema::Error> errors, const std::string& prefix) {
  auto escape = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '~')
        out += "~0";
      else if (c == '/')
        out += "~1";
      else
        out += c;
    }
    return out;
  };
  // The child a "context" message refers to, or nullopt for a specific message.
  auto child_of = [&](const std::string& message) -> std::optional<std::string> {
    static const std::string prop = "Failed to validate against schema associated with property name '";
    static const std::string item = "Failed to validate item #";
    if (message.rfind(prop, 0) == 0) {
      auto end = message.rfind("'.");
      if (end == std::string::npos || end < prop.size()) return std::nullopt;
      return escape(message.substr(prop.size(), end - prop.size()));
    }
    if (message.rfind(item, 0) == 0) {
      size_t i = item.size(), j = i;
      while (j < message.size() && message[j] >= '0' && message[j] <= '9') ++j;
      if (j == i) return std::nullopt;
      return message.substr(i, j - i);
    }
    return std::nullopt;
  };
  // Messages that only say "something below failed": dropped when a deeper error exists.
  auto is_context = [](const std::string& message) {
    return message.rfind("Failed to validate against additional properties schema", 0) == 0 ||
           message.rfind("Failed to validate against schema associated with pattern", 0) == 0;
  };
  auto has_deeper = [&](const schema::Error& e) {
    for (const auto& other : errors)
      if (other.pointer.size() > e.pointer.size() && other.pointer.rfind(e.pointer + "/", 0) == 0) return true;
    return false;
  };
  // "Failed to validate against child schema #n." adds nothing when the alternatives' own
  // errors and the anyOf/oneOf summary are reported at the same place.
  auto is_child_summary = [](const std::string& message) {
    return message.rfind("Failed to validate against child schema #", 0) == 0;
  };
  auto has_sibling = [&](const schema::Error& e) {
    for (const auto& other : errors)
      if (&other != &e && other.pointer == e.pointer && !is_child_summary(other.message)) return true;
    return false;
  };
  std::vector<schema::Error> out;
  for (const auto& e : errors) {
    if (is_context(e.message) && has_deeper(e)) continue;
    if (is_child_summary(e.message) && has_sibling(e)) continue;
    if (auto child = child_of(e.message)) {
      std::string under = e.pointer + "/" + *child;
      bool covered = false;
      for (const auto& other : errors) {
        if (&other == &e) continue;
        if (other.pointer == under || other.pointer.rfind(under + "/", 0) == 0) {
          covered = true;
          break;
        }
      }
      if (covered) continue;
      // Nothing more specific was reported (valijson says nothing for propertyNames):
      // point at the child at least.
      schema::Error at_child{
          prefix + under,
          "Failed validation here (no more specific reason reported: check the allowed keys and values)"};
      bool dup = false;
      for (const auto& o : out) dup = dup || (o.pointer == at_child.pointer && o.message == at_child.message);
      if (!dup) out.push_back(std::move(at_child));
      continue;
    }
    schema::Error x{prefix + e.pointer, e.message};
    bool dup = false;
    for (const auto& o : out) dup = dup || (o.pointer == x.pointer && o.message == x.message);
    if (!dup) out.push_back(std::move(x));
  }
  return out;
}

}  // namespace yolo::records
