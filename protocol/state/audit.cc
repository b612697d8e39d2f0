#include "protocol/state/audit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "protocol/ports/clock.h"
#include "protocol/ports/fs.h"
#include "protocol/base/seal.h"
#include "protocol/base/sha256.h"
#include "protocol/base/text.h"

namespace yolo::audit {

namespace stdfs = std::filesystem;

namespace {

constexpr const char* kMacDomain = "yolo-audit-v1";
constexpr size_t kMaxLog = 64u << 20;
// What an append reads of the log: its end, where the chain's last entry is (an entry is a
// few hundred bytes). Reading the whole log made every gate step slower over a project's
// life, and a log over kMaxLog restarted the chain.
constexpr size_t kAppendTail = 1u << 20;

std::string canonical(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The hash of an entry: over everything but its hash and mac.
std::string entry_hash(const json& e) {
  json body = e;
  body.erase("hash");
  body.erase("mac");
  return sha256_hex(canonical(body));
}

// The end of the chain: the hash and sequence number of the last line that is a JSON entry
// (nullopt: no such line).
// Read from the end backwards (an append must not cost the whole log: parsing every line on
// every append made a project's audit log quadratic over its life); lines that are
// not entries are skipped, as the forward reading skipped them.
std::optional<std::string> last_entry_hash(const std::string& content, long long& seq) {
  seq = 0;
  size_t end = content.size();
  while (end > 0) {
    size_t nl = content.rfind('\n', end - 1);
    size_t begin = nl == std::string::npos ? 0 : nl + 1;
    std::string_view line = text::trim(std::string_view(content).substr(begin, end - begin));
    if (!line.empty()) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object()) {
        seq = j.value("seq", 0LL);
        return j.value("hash", std::string());
      }
    }
    if (nl == std::string::npos) break;
    end = nl;
  }
  return std::nullopt;
}

}  // namespace

stdfs::path path(const stdfs::path& root) { return root / ".yolo-planning" / "audit-log.jsonl"; }

Status append(const World& w, const stdfs::path& root, const std::vector<events::Event>& evs, Head* head) {
  if (evs.empty()) return {};
  const seal::Key& key = w.sealing_key();
  // The end of the chain is read under the file's lock, with the append: one step.
  return w.files().append(
      path(root),
      [&](const std::string& before) {
        long long seq = 0;
        std::string prev = last_entry_hash(before, seq).value_or("");
        std::string out;
        for (const auto& ev : evs) {
          json e = {{"seq", ++seq},    {"ts", w.now()}, {"event", ev.type}, {"correlation_id", ev.correlation_id},
                    {"data", ev.data}, {"prev", prev}};
          e["hash"] = entry_hash(e);
          e["mac"] = seal::seal_of(kMacDomain, json{{"hash", e["hash"]}}, key);
          prev = e["hash"].get<std::string>();
          out += canonical(e) + "\n";
        }
        if (head) *head = Head{seq, prev};
        return out;
      },
      kAppendTail, true,
      // A window holding an entry holds the last one: a larger window gives the same end.
      [](const std::string& window) {
        long long seq = 0;
        return last_entry_hash(window, seq).has_value();
      });
}

Check check(const World& w, const stdfs::path& root) {
  Check c;
  stdfs::path p = path(root);
  fs::Disk& disk = w.files();
  if (!disk.exists(p)) return c;
  c.exists = true;
  auto r = disk.read(p, kMaxLog, false);
  if (!r.ok()) {
    c.problems.push_back(p.string() + ": " + r.error->message);
    return c;
  }
  std::string prev;
  long long want_seq = 1;
  int lineno = 0;
  for (auto line : text::lines(r.content)) {
    ++lineno;
    line = text::trim(line);
    if (line.empty()) continue;
    std::string where = p.filename().string() + " line " + std::to_string(lineno);
    json e = json::parse(line, nullptr, false);
    if (!e.is_object()) {
      c.problems.push_back(where + ": not a JSON entry");
      continue;
    }
    c.entries.push_back(e);
    std::string hash = e.value("hash", std::string()), mac = e.value("mac", std::string());
    if (e.value("prev", std::string("?")) != prev)
      c.problems.push_back(where +
                           ": the chain is broken (prev does not match the entry before: one was removed or edited)");
    if (entry_hash(e) != hash)
      c.problems.push_back(where + ": the entry was edited (its hash does not match its content)");
    else if (!seal::check(kMacDomain, json{{"hash", hash}}, mac, w.checking_key()))
      c.problems.push_back(where + ": the entry carries no valid mac (not written by yolo with this machine's key)");
    if (e.value("seq", 0LL) != want_seq)
      c.problems.push_back(where + ": sequence number " + std::to_string(e.value("seq", 0LL)) + ", expected " +
                           std::to_string(want_seq));
    want_seq = e.value("seq", 0LL) + 1;
    prev = hash;
  }
  return c;
}

namespace {
constexpr const char* kHeadDomain = "yolo-audit-head-v1";
json head_fields(const json& a) {
  return json{{"seq", a.value("seq", 0LL)},
              {"hash", a.value("hash", std::string())},
              {"gates", a.value("gates", std::string())}};
}
}  // namespace

std::string gates_fingerprint(const json& state) {
  json ids = json::array();
  if (state.is_object())
    if (auto it = state.find("gates"); it != state.end() && it->is_array())
      for (const auto& g : *it)
        ids.push_back(json::array({g.value("id", json(nullptr)), g.value("status", json(nullptr))}));
  return "sha256:" + sha256_hex(canonical(ids));
}

json anchor(const World& w, const Head& h, const json& state) {
  json a = {{"seq", h.seq}, {"hash", h.hash}, {"gates", gates_fingerprint(state)}};
  a["mac"] = seal::seal_of(kHeadDomain, head_fields(a), w.sealing_key());
  return a;
}

Status append_anchored(const World& w, const stdfs::path& root, json& state,
                       const std::vector<events::Event>& evs) {
  if (evs.empty()) return {};
  Head head;
  Status s = append(w, root, evs, &head);
  if (s.ok()) state["audit_head"] = anchor(w, head, state);
  return s;
}

std::vector<std::string> check_anchor(const World& w, const json& state, const Check& log) {
  std::vector<std::string> out;
  const std::string name = "audit-log.jsonl";
  auto it = state.is_object() ? state.find("audit_head") : json::const_iterator();
  bool has_gates = state.is_object() && state.contains("gates") && state["gates"].is_array() && !state["gates"].empty();
  if (!state.is_object() || it == state.end() || !it->is_object()) {
    if (has_gates || !log.entries.empty())
      out.push_back(
          "the state records no audit_head (the audit log's end at the last gate transition): it was "
          "removed, or the state was written by an older yolo; the log's last entries and the state's "
          "gates cannot be checked against each other");
    return out;
  }
  const json& a = *it;
  if (!seal::check(kHeadDomain, head_fields(a), a.value("mac", std::string()), w.checking_key())) {
    out.push_back(
        "the state's audit_head carries no valid mac (edited, or not written by yolo with this machine's "
        "key)");
    return out;
  }
  long long seq = a.value("seq", 0LL);
  const json* at = nullptr;
  for (const auto& e : log.entries)
    if (e.value("seq", 0LL) == seq) at = &e;
  long long last = log.entries.empty() ? 0 : log.entries.back().value("seq", 0LL);
  if (!at) {
    out.push_back(name + " ends at entry " + std::to_string(last) + " but the state anchored its end at entry " +
                  std::to_string(seq) + ": " + std::to_string(seq - last) +
                  " entr(y/ies) were removed from its end (a transition, such as a rejection, was erased)");
  } else if (at->value("hash", std::string()) != a.value("hash", std::string())) {
    out.push_back(name + " entry " + std::to_string(seq) +
                  " is not the one the state anchored (the log's end was replaced)");
  }
  if (gates_fingerprint(state) != a.value("gates", std::string()))
    out.push_back(
        "the state's gates changed since the last gate transition yolo recorded (a gate was removed, "
        "added or its status edited by hand)");
  return out;
}

}  // namespace yolo::audit
