#include "protocol/schema.h"

#include <map>
#include <memory>
#include <mutex>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "protocol/schema_registry.h"

namespace yolo::schema {
namespace {

struct Compiled {
  json doc;
  std::unique_ptr<valijson::Schema> schema;
};

struct Registry {
  std::map<std::string, Compiled> by_name;
  Registry() {
    for (const auto& e : schemas::embedded()) {
      Compiled c;
      c.doc = json::parse(e.text);  // a broken schema is a build defect: fail loudly
      c.schema = std::make_unique<valijson::Schema>();
      valijson::SchemaParser parser;
      valijson::adapters::NlohmannJsonAdapter adapter(c.doc);
      parser.populateSchema(adapter, *c.schema);
      by_name.emplace(std::string(e.name), std::move(c));
    }
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
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
      if (c == '~') esc += "~0";
      else if (c == '/') esc += "~1";
      else esc += c;
    }
    out += "/" + esc;
  }
  return out;
}

}  // namespace

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& [n, _] : registry().by_name) out.push_back(n);
  return out;
}

bool has(const std::string& name) { return registry().by_name.count(name) > 0; }

const json& document(const std::string& name) { return registry().by_name.at(name).doc; }

std::vector<Error> validate(const std::string& name, const json& doc) {
  const auto& reg = registry();
  auto it = reg.by_name.find(name);
  if (it == reg.by_name.end()) return {Error{"", "unknown schema '" + name + "'"}};
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(doc);
  std::vector<Error> out;
  if (validator.validate(*it->second.schema, adapter, &results)) return out;
  valijson::ValidationResults::Error e;
  // valijson reports each failing level; keep the deepest, most specific ones first.
  std::vector<Error> all;
  while (results.popError(e)) all.push_back(Error{to_pointer(e.context), e.description});
  std::stable_sort(all.begin(), all.end(),
                   [](const Error& a, const Error& b) { return a.pointer.size() > b.pointer.size(); });
  return all;
}

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
