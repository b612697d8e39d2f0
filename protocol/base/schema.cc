#include "protocol/base/schema.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "protocol/base/schema_registry.h"

namespace yolo::schema {
namespace {

// Schemas are parsed and compiled on first use, one name at a time, and cached for the
// process: a command that validates one kind of document pays for that schema only
// (compiling all of them took most of a short command's run time).
struct Entry {
  std::string_view text;
  std::once_flag doc_once;
  json doc;
  std::once_flag schema_once;
  std::unique_ptr<valijson::Schema> schema;
};

std::atomic<size_t> g_compiled{0};

struct Registry {
  std::map<std::string, Entry, std::less<>> by_name;
  Registry() {
    for (const auto& e : schemas::embedded()) by_name[std::string(e.name)].text = e.text;
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

Entry* find(std::string_view name) {
  auto& reg = registry();
  auto it = reg.by_name.find(name);
  return it == reg.by_name.end() ? nullptr : &it->second;
}

const json& doc_of(Entry& e) {
  // A broken schema is a build defect: fail loudly (json::parse throws).
  std::call_once(e.doc_once, [&e] { e.doc = json::parse(e.text); });
  return e.doc;
}

const valijson::Schema& schema_of(Entry& e) {
  std::call_once(e.schema_once, [&e] {
    auto compiled = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter adapter(doc_of(e));
    parser.populateSchema(adapter, *compiled);
    e.schema = std::move(compiled);
    ++g_compiled;
  });
  return *e.schema;
}

std::string to_pointer(const std::vector<std::string>& context) {
  std::string out;
  for (const auto& part : context) {
    if (part == "<root>") continue;
    std::string p = part;
    if (p.size() >= 2 && p.front() == '[' && p.back() == ']') p = p.substr(1, p.size() - 2);
    if (p.size() >= 2 && p.front() == '"' && p.back() == '"') p = p.substr(1, p.size() - 2);
    std::string esc;
    for (char c : p) {
      if (c == '~')
        esc += "~0";
      else if (c == '/')
        esc += "~1";
      else
        esc += c;
    }
    out += "/" + esc;
  }
  return out;
}

// The schema fragment that describes the value at `pointer` of a document: properties,
// additionalProperties, items and local $refs followed; null when it cannot be told.
const json* fragment_at(const json& root, const std::string& pointer) {
  const json* at = &root;
  auto deref = [&](const json* f) -> const json* {
    for (int hops = 0; f && f->is_object() && f->contains("$ref") && hops < 8; ++hops) {
      const json& r = (*f)["$ref"];
      if (!r.is_string() || r.get<std::string>().rfind("#/", 0) != 0) return f;
      try {
        f = &root.at(json::json_pointer(r.get<std::string>().substr(1)));
      } catch (...) {
        return nullptr;
      }
    }
    return f;
  };
  at = deref(at);
  size_t i = 0;
  while (at && i < pointer.size()) {
    size_t next = pointer.find('/', i + 1);
    std::string key = pointer.substr(i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
    i = next == std::string::npos ? pointer.size() : next;
    for (size_t k; (k = key.find("~1")) != std::string::npos;) key.replace(k, 2, "/");
    for (size_t k; (k = key.find("~0")) != std::string::npos;) key.replace(k, 2, "~");
    if (!at->is_object()) return nullptr;
    if (at->contains("properties") && (*at)["properties"].contains(key))
      at = &(*at)["properties"][key];
    else if (at->contains("items") && (*at)["items"].is_object())
      at = &(*at)["items"];
    else if (at->contains("additionalProperties") && (*at)["additionalProperties"].is_object())
      at = &(*at)["additionalProperties"];
    else
      return nullptr;
    at = deref(at);
  }
  return at;
}

// valijson says only that no enum value matched: the values allowed and the one found.
void name_enum_values(const json& schema, const json& doc, Error& e) {
  if (e.message.find("enum") == std::string::npos) return;
  const json* f = fragment_at(schema, e.pointer);
  if (!f || !f->is_object() || !f->contains("enum") || !(*f)["enum"].is_array()) return;
  std::string allowed;
  for (const auto& v : (*f)["enum"]) allowed += (allowed.empty() ? "" : ", ") + v.dump();
  std::string got;
  try {
    got = doc.at(json::json_pointer(e.pointer)).dump();
  } catch (...) {
  }
  if (got.size() > 60) got = got.substr(0, 57) + "...";
  std::string head = e.message;
  while (!head.empty() && (head.back() == '.' || head.back() == ' ')) head.pop_back();
  e.message =
      head + ": " + (got.empty() ? std::string("allowed") : got + " is not one of the allowed values") + ": " + allowed;
}

}  // namespace

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& [n, _] : registry().by_name) out.push_back(n);
  return out;
}

bool has(const std::string& name) { return find(name) != nullptr; }

const json& document(const std::string& name) {
  Entry* e = find(name);
  if (!e) throw std::out_of_range("unknown schema '" + name + "'");
  return doc_of(*e);
}

std::vector<Error> validate(const std::string& name, const json& doc) {
  Entry* entry = find(name);
  if (!entry) return {Error{"", "unknown schema '" + name + "'"}};
  const valijson::Schema& compiled = schema_of(*entry);
  // The validator keeps the std::regex of each `pattern` it has met: one per thread, so a
  // pattern is compiled once, not on every call (that was most of a small document's check).
  thread_local valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(doc);
  std::vector<Error> out;
  if (validator.validate(compiled, adapter, &results)) return out;
  valijson::ValidationResults::Error e;
  // valijson reports each failing level; keep the deepest, most specific ones first.
  std::vector<Error> all;
  while (results.popError(e)) {
    all.push_back(Error{to_pointer(e.context), e.description});
    name_enum_values(doc_of(*entry), doc, all.back());
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Error& a, const Error& b) { return a.pointer.size() > b.pointer.size(); });
  return all;
}

size_t compiled_count() { return g_compiled.load(); }

std::string describe(const std::vector<Error>& errors, size_t max) {
  std::string out;
  for (size_t i = 0; i < errors.size() && i < max; ++i) {
    if (i) out += "; ";
    out += (errors[i].pointer.empty() ? "(document)" : errors[i].pointer) + ": " + errors[i].message;
  }
  if (errors.size() > max) out += "; (" + std::to_string(errors.size() - max) + " more)";
  return out;
}

}  // namespace yolo::schema
