// yolo validate FILE... [--schema NAME] [--json]       a JSON file, or a Markdown file's
//                                                      frontmatter, against an embedded schema
// yolo validate --stage STAGE FILE... [--json]         the per-stage quality gate of seeds/004
// yolo validate --list [--json]                        the embedded schema names
// Exit 0 valid, 1 invalid or unreadable, 64 for a bad option (unknown schema or stage).
#include <filesystem>
#include <map>

#include "protocol/plan/frontmatter.h"
#include "protocol/ports/fs.h"
#include "protocol/state/records.h"
#include "protocol/base/schema.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::vector<std::string> files;
  std::string schema;
  std::string stage;
  bool json = false;
  bool list = false;
};

struct Loaded {
  json doc;
  bool markdown = false;
  std::string error;  // whole sentence naming the file
};

bool is_markdown(const std::string& path) {
  std::string ext = text::to_lower(stdfs::path(path).extension().string());
  return ext == ".md" || ext == ".markdown";
}

Loaded load(const World& w, const std::string& path) {
  Loaded l;
  auto read = w.files().read(path, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!read.ok()) {
    l.error = read.error->kind == fs::FileError::Kind::NotFound ? "file not found: " + path : read.error->message;
    return l;
  }
  if (is_markdown(path)) {
    l.markdown = true;
    Frontmatter fm = parse_frontmatter(read.content);
    if (fm.error) {
      std::string where = path;
      if (fm.error->line) where += ":" + std::to_string(fm.error->line);
      if (fm.error->column) where += ":" + std::to_string(fm.error->column);
      l.error = where + ": " + fm.error->message;
    } else if (!fm.has_frontmatter) {
      l.error = path + ": no frontmatter (the file must start with a line ---)";
    } else {
      l.doc = std::move(fm.data);
    }
    return l;
  }
  // Bounded like YAML frontmatter: a document nested hundreds of thousands deep would
  // overflow the stack when copied, printed or validated.
  JsonParse parsed = parse_json_bounded(read.content);
  if (parsed.problem == JsonParse::Problem::TooDeep) {
    l.error = path + ":" + std::to_string(parsed.line) + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
              " levels";
  } else if (!parsed.ok()) {
    l.error = path + ": " + parsed.message;
  } else {
    l.doc = std::move(parsed.doc);
  }
  return l;
}

json errors_json(const std::vector<schema::Error>& errors) {
  json a = json::array();
  for (const auto& e : errors) a.push_back({{"pointer", e.pointer}, {"message", e.message}});
  return a;
}

std::string pointer_text(const std::string& p) { return p.empty() ? "(document)" : p; }

// The value at a pointer, shortened, for "(got ...)"; empty when the pointer does not resolve.
std::string value_at(const json& doc, const std::string& pointer) {
  if (pointer.empty()) return "";
  try {
    const json& v = doc.at(json::json_pointer(pointer));
    if (v.is_object() || v.is_array()) return "";
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
  } catch (const json::exception&) {
    return "";
  }
}

// Paths, pointers (keys of the document) and messages for people: no control characters
// reach the terminal.
std::string safe(const std::string& s) { return text::sanitize_for_terminal(s); }

void print_error_lines(const std::vector<schema::Error>& errors, const std::string& indent, const json& doc) {
  for (const auto& e : errors) {
    std::string got = value_at(doc, e.pointer);
    out::line(indent + out::sym(out::Sym::Fail) + " " + safe(pointer_text(e.pointer)) + ": " + safe(e.message) +
              (got.empty() ? "" : " (got " + safe(got) + ")"));
  }
}

std::string known_schemas() {
  std::string s;
  for (const auto& n : schema::names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// One usage problem (unknown schema or stage): exit 64.
int usage_error(const Options& o, const std::string& message) {
  if (o.json)
    out::json_line({{"ok", false}, {"cmd", "validate"}, {"error", message}});
  else
    out::err("validate: " + safe(message));
  return kExitUsage;
}

int run_list(const Options& o) {
  auto names = schema::names();
  if (o.json) {
    out::json_line({{"ok", true}, {"cmd", "validate"}, {"schemas", names}});
  } else {
    for (const auto& n : names) out::line(n);
  }
  return kExitOk;
}

// Validates one file; prints its result. Returns true when valid.
bool validate_one(const World& w, const Options& o, const std::string& file) {
  json result = {{"cmd", "validate"}, {"file", file}};
  Loaded l = load(w, file);
  if (!l.error.empty()) {
    result["ok"] = false;
    result["valid"] = false;
    result["error"] = l.error;
    if (o.json)
      out::json_line(result);
    else
      out::line(out::sym(out::Sym::Fail) + " " + safe(l.error));
    return false;
  }
  std::string schema_name = o.schema;
  std::string kind;
  json document;
  std::string prefix;
  if (schema_name.empty()) {
    records::SchemaChoice c = records::detect_schema(file, l.doc);
    if (c.schema.empty()) {
      std::string msg =
          "cannot detect the kind of " + file + " (" + c.reason + "); pass --schema NAME (see yolo validate --list)";
      result["ok"] = false;
      result["valid"] = false;
      result["error"] = msg;
      if (o.json)
        out::json_line(result);
      else
        out::line(out::sym(out::Sym::Fail) + " " + safe(msg));
      return false;
    }
    schema_name = c.schema;
    kind = c.kind;
    document = std::move(c.document);
    prefix = c.prefix;
    result["detected_by"] = c.reason;
  } else {
    auto p = records::prepare(schema_name, l.doc);
    document = std::move(p.document);
    prefix = p.prefix;
    if (auto k = records::kind_for_schema(schema_name)) kind = *k;
  }
  auto errors = records::tidy(schema::validate(schema_name, document), prefix);
  bool valid = errors.empty();
  result["ok"] = valid;
  result["valid"] = valid;
  result["schema"] = schema_name;
  if (!kind.empty()) result["kind"] = kind;
  if (l.markdown) result["frontmatter"] = true;
  result["errors"] = errors_json(errors);
  if (o.json) {
    out::json_line(result);
  } else if (valid) {
    out::line(out::sym(out::Sym::Ok) + " " + safe(file) + ": valid " + schema_name);
  } else {
    out::line(out::sym(out::Sym::Fail) + " " + safe(file) + ": " + std::to_string(errors.size()) +
              (errors.size() == 1 ? " error" : " errors") + " against " + schema_name);
    print_error_lines(errors, "    ", l.doc);
  }
  return valid;
}

int run_stage(const World& w, const Options& o, const std::string& stage) {
  std::vector<records::GateOutput> outputs;
  std::vector<std::string> load_errors;
  for (const auto& f : o.files) {
    Loaded l = load(w, f);
    if (!l.error.empty()) {
      load_errors.push_back(l.error);
      continue;
    }
    if (l.doc.is_array()) {  // a file of records
      for (size_t i = 0; i < l.doc.size(); ++i) outputs.push_back({f + "[" + std::to_string(i) + "]", l.doc[i]});
    } else {
      outputs.push_back({f, std::move(l.doc)});
    }
  }
  records::GateResult g = records::gate_check(stage, outputs);
  std::map<std::string, json> docs;  // source -> document, for "(got ...)"
  for (const auto& output : outputs) docs[output.source] = output.doc;
  std::vector<std::string> all_errors = load_errors;
  all_errors.insert(all_errors.end(), g.errors.begin(), g.errors.end());
  bool valid = all_errors.empty();
  const char* action = valid ? "PROCEED" : "REVISE";
  if (o.json) {
    json recs = json::array();
    for (const auto& r : g.records) {
      recs.push_back({{"source", r.source},
                      {"kind", r.kind.empty() ? json(nullptr) : json(r.kind)},
                      {"valid", r.errors.empty()},
                      {"errors", errors_json(r.errors)}});
    }
    out::json_line({{"ok", valid},
                    {"cmd", "validate"},
                    {"stage", g.stage},
                    {"valid", valid},
                    {"action", action},
                    {"required", g.required},
                    {"checked", g.checked},
                    {"missing", g.missing},
                    {"records", recs},
                    {"errors", all_errors}});
    return valid ? kExitOk : kExitFail;
  }
  std::string req;
  for (const auto& r : g.required) req += (req.empty() ? "" : ", ") + r;
  out::line(out::sym(out::Sym::Diamond) + " " + out::bold(g.stage + " gate") + ": requires " + req);
  for (const auto& e : load_errors) out::line("  " + out::sym(out::Sym::Fail) + " " + safe(e));
  for (const auto& r : g.records) {
    if (r.kind.empty()) {
      out::line("  " + out::sym(out::Sym::Skip) + " " + safe(r.source) + ": not a workflow record (ignored)");
    } else if (r.errors.empty()) {
      out::line("  " + out::sym(out::Sym::Ok) + " " + safe(r.source) + ": " + r.kind);
    } else {
      out::line("  " + out::sym(out::Sym::Fail) + " " + safe(r.source) + ": " + r.kind + ", " +
                std::to_string(r.errors.size()) + (r.errors.size() == 1 ? " error" : " errors"));
      print_error_lines(r.errors, "      ", docs[r.source]);
    }
  }
  for (const auto& m : g.missing) out::line("  " + out::sym(out::Sym::Fail) + " Missing required: " + safe(m));
  if (valid)
    out::line(out::sym(out::Sym::Ok) + " " + g.stage + " gate passed: " + action);
  else
    out::line(out::sym(out::Sym::Fail) + " " + g.stage + " gate failed: " + action);
  return valid ? kExitOk : kExitFail;
}

int run(const World& w, const Options& o) {
  if (o.list) return run_list(o);
  if (!o.schema.empty() && !schema::has(o.schema))
    return usage_error(o, "unknown schema '" + o.schema + "' (known: " + known_schemas() + ")");
  if (o.files.empty()) return usage_error(o, "give a FILE to validate (or --list)");
  if (!o.stage.empty()) {
    auto stage = records::stage_name(o.stage);
    if (!stage)
      return usage_error(
          o, "unknown stage '" + o.stage + "' (known: PLAN, REVIEW, DISRUPT, IMPLEMENT, TEST, VALIDATE, LEARN)");
    if (!o.schema.empty()) return usage_error(o, "--stage and --schema cannot be combined");
    return run_stage(w, o, *stage);
  }
  bool all_valid = true;
  for (const auto& f : o.files) all_valid = validate_one(w, o, f) && all_valid;
  return all_valid ? kExitOk : kExitFail;
}

const CommandRegistrar reg{Command{
    "validate", "Validate JSON files or Markdown frontmatter against the embedded schemas (exit 0 valid, 1 invalid)",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("FILES", o->files, "JSON files, or Markdown files (their frontmatter is validated)");
      sub.add_option("--schema", o->schema, "Schema name (default: detected from the file name or content)");
      sub.add_option("--stage", o->stage,
                     "Apply a stage's quality gate (PLAN REVIEW DISRUPT IMPLEMENT TEST VALIDATE LEARN)");
      sub.add_flag("--list", o->list, "Print the names of the embedded schemas");
      sub.add_flag("--json", o->json, "Machine-readable output: one JSON line per file (or one for the gate)");
      return [o](const Context& ctx) { return run(ctx.world, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
