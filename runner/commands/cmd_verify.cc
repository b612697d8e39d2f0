// yolo verify: re-checks offline everything recorded about approvals and reviews (PROTOCOL.md
// section 6, "Trust"): every approval (seal, project, run, content it covers), every gate
// transition (the hash-chained audit log, and that it holds every recorded approval) and
// every review record (its seal). Prints what fails; exits 1 when anything does. Meant as
// a required CI check.
#include <filesystem>
#include <map>

#include "protocol/state/audit.h"
#include "protocol/state/config.h"
#include "protocol/run/execution.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/approvals.h"
#include "protocol/review/review_ledger.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/run/sandbox_policy.h"
#include "protocol/base/seal.h"
#include "protocol/state/state.h"
#include "protocol/base/text.h"
#include "runner/command.h"
#include "runner/gates_view.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

namespace stdfs = std::filesystem;

struct Options {
  std::string repo;
  bool json = false;
};

std::string str(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int verify(const Context& ctx, const Options& o) {
  const World& w = ctx.world;
  std::string err;
  auto root = find_project(ctx, o.repo, err);
  if (!root) {
    if (o.json) out::json_line({{"ok", false}, {"cmd", "verify"}, {"error", err}});
    out::err(out::sym(out::Sym::Fail) + " verify: " + err);
    return kExitFail;
  }
  json failures = json::array(), passed = json::array();
  auto fail = [&](const std::string& what, const std::string& why) {
    failures.push_back({{"what", what}, {"problem", why}});
  };
  auto pass = [&](const std::string& what) { passed.push_back(what); };

  // Approvals and gates.
  auto snap = state::load(w, *root);
  json doc = snap.ok() ? snap.doc : json::object();
  if (!snap.ok()) fail("state", snap.error);
  const gates::Now now = gates::now_of(w, *root);
  for (const auto& p : gates::gate_list_problems(doc)) fail("gates", p);
  std::map<std::string, const json*> latest;  // (type, file) -> its latest gate
  if (doc.contains("gates") && doc["gates"].is_array())
    for (const auto& g : doc["gates"]) latest[str(g, "gate_type") + "\n" + str(g, "plan_path")] = &g;
  std::map<std::string, std::string> approved_seals;  // gate id -> seal
  if (doc.contains("gates") && doc["gates"].is_array())
    for (const auto& g : doc["gates"]) {
      if (!gates::has_status(g, gates::GateStatus::Approved)) continue;
      std::string what = "gate " + str(g, "id") + " (" + str(g, "gate_type") + " for " + str(g, "plan_path") + ")";
      gates::ApprovalStatus st = gates::gate_status(doc, g, now);
      bool is_latest = latest[str(g, "gate_type") + "\n" + str(g, "plan_path")] == &g;
      // An older approval whose content changed since is history (a newer gate followed);
      // its seal and binding must still hold.
      bool only_content = st.check == gates::ApprovalCheck::Stale && seal::valid(g, w.checking_key()) &&
                          str(g, "project") == now.project && str(g, "run") == str(doc, "correlation_id");
      if (st.counts() || (!is_latest && only_content))
        pass(what + " approved by " + str(g, "approved_by"));
      else
        fail(what, st.message);
      approved_seals[str(g, "id")] = str(g, "seal");
    }
  // An approved object with no sealed gate behind it.
  if (doc.contains("approval") && doc["approval"].is_object() && doc["approval"].value("approved", false)) {
    std::string gid = str(doc["approval"], "gate_id");
    if (gid.empty() || !approved_seals.count(gid))
      fail("approval", "approval.approved is true but no approved, sealed gate" +
                           (gid.empty() ? std::string() : " " + gid) + " backs it");
  }

  for (const auto& m : gates::mirror_problems(doc)) fail("approval", m);

  // The audit log: an unbroken chain that records every approval, whose end is where the
  // state anchored it, and whose every gate is still in the state.
  auto log = audit::check(w, *root);
  for (const auto& p : log.problems) fail("audit log", p);
  std::vector<std::string> anchor_problems;
  if (snap.ok()) anchor_problems = audit::check_anchor(w, doc, log);
  for (const auto& p : anchor_problems) fail("audit log", p);
  {
    std::map<std::string, std::string> last_event;  // gate id -> its last transition in the log
    std::vector<std::string> order;
    for (const auto& e : log.entries)
      if (e.contains("data") && e["data"].is_object() && !str(e["data"], "gate_id").empty()) {
        std::string id = str(e["data"], "gate_id");
        if (!last_event.count(id)) order.push_back(id);
        last_event[id] =
            str(e, "event") + (str(e["data"], "gate_type").empty()
                                   ? std::string()
                                   : " (" + str(e["data"], "gate_type") + " for " + str(e["data"], "plan_path") + ")");
      }
    std::map<std::string, std::string> in_state;  // gate id -> status
    if (doc.contains("gates") && doc["gates"].is_array())
      for (const auto& g : doc["gates"]) in_state[str(g, "id")] = str(g, "status");
    for (const auto& id : order) {
      auto it = in_state.find(id);
      const std::string& ev = last_event[id];
      if (it == in_state.end()) {
        fail("gate " + id,
             "it is in " + audit::path(*root).filename().string() + " (last: " + ev +
                 ") but not in the state: the gate was removed" +
                 (ev.rfind("gate_rejected", 0) == 0 ? " after it was rejected (a rejection was erased)" : ""));
        continue;
      }
      using gates::GateStatus;
      std::string want = ev.rfind("gate_rejected", 0) == 0  ? std::string(to_string(GateStatus::Rejected))
                         : ev.rfind("gate_resumed", 0) == 0 ? std::string(to_string(GateStatus::Approved))
                         : ev.rfind("gate_frozen", 0) == 0  ? std::string(to_string(GateStatus::Open))
                                                            : std::string();
      if (!want.empty() && it->second != want)
        fail("gate " + id, "the audit log's last transition of it is " + ev + " but the state says " + it->second);
    }
  }
  std::map<std::string, std::string> logged_seals;
  for (const auto& e : log.entries)
    if (str(e, "event") == "gate_resumed" && e.contains("data") && e["data"].is_object())
      logged_seals[str(e["data"], "gate_id")] = str(e["data"], "seal");
  for (const auto& [id, seal] : approved_seals) {
    auto it = logged_seals.find(id);
    if (it == logged_seals.end())
      fail("audit log", "the approval of gate " + id + " is not in " + audit::path(*root).filename().string() +
                            " (an entry was removed, or the approval was not made by yolo here)");
    else if (it->second != seal)
      fail("audit log", "the approval of gate " + id + " differs from the one the audit log recorded");
  }
  if (log.exists && log.problems.empty() && anchor_problems.empty())
    pass("audit log: " + std::to_string(log.entries.size()) + " entries, chain intact, its end where the state says");

  // Work done past a gate: every complete plan ran after a counting vision approval, and
  // a plan of wave N >= 2 under wave_approval after a counting approval of wave N's gate.
  if (snap.ok() && doc.contains("plans") && doc["plans"].is_array()) {
    auto sealed_approval = [&](const json& g) {
      if (!gates::has_status(g, gates::GateStatus::Approved)) return false;
      gates::ApprovalStatus st = gates::gate_status(doc, g, now);
      if (st.counts()) return true;
      // History: content changed since, but made and bound here.
      return seal::valid(g, w.checking_key()) && str(g, "project") == now.project &&
             str(g, "run") == str(doc, "correlation_id");
    };
    bool vision_ok = false, any_wave_gate = false;
    std::map<long long, bool> wave_ok;
    if (doc.contains("gates") && doc["gates"].is_array())
      for (const auto& g : doc["gates"]) {
        if (str(g, "gate_type") == "vision" && sealed_approval(g)) vision_ok = true;
        if (str(g, "gate_type") == "wave" && g.contains("wave") && g["wave"].is_number_integer()) {
          any_wave_gate = true;
          if (sealed_approval(g)) wave_ok[g["wave"].get<long long>()] = true;
        }
      }
    bool waves_gated = any_wave_gate || load_config(w, *root).config.wave_approval;
    for (const auto& p : doc["plans"]) {
      if (execution::plan_status(p) != execution::PlanStatus::Complete) continue;
      long long wave = p.contains("wave") && p["wave"].is_number_integer() ? p["wave"].get<long long>() : 1;
      if (!vision_ok)
        fail("plan " + str(p, "id"),
             "it is complete, but no vision approval that counts is recorded: it ran past "
             "the vision gate");
      else if (waves_gated && wave >= 2 && !wave_ok[wave])
        fail("plan " + str(p, "id"), "it is complete, but wave " + std::to_string(wave) +
                                         "'s gate has no approval that counts: it ran past the wave gate");
    }
  }

  // Review records.
  std::error_code ec;
  size_t records = 0;
  for (stdfs::directory_iterator it(review_ledger::dir(*root), ec), end; !ec && it != end; it.increment(ec)) {
    const auto& f = it->path();
    std::string n = f.filename().string();
    if (n.empty() || n.front() == '.' || f.extension() != ".json") continue;
    auto r = state::load_document(w, f, "review-ledger");
    if (!r.ok()) {
      fail("review ledger " + n, r.error);
      continue;
    }
    // The records appended to its journal since (protocol/review/review_ledger.h) count too.
    if (auto j = w.files().read(review_ledger::journal_for(f), 16u << 20, /*text=*/false); j.ok())
      review_ledger::apply_journal(r.doc, j.content);
    if (!r.doc.contains("reviews") || !r.doc["reviews"].is_object()) continue;
    for (auto& [id, rec] : r.doc["reviews"].items()) {
      if (review_ledger::trusted(w, *root, f, id, rec))
        ++records;
      else
        fail("review record " + id + " in " + n,
             "no valid seal: not made by yolo's review in this project (edited, copied or older)");
    }
  }
  if (records) pass(std::to_string(records) + " review record(s) sealed by yolo");

  // Each plan's confinement record is yolo's: sealed for this project, run and plan.
  size_t sealed_plans = 0;
  if (doc.contains("plans") && doc["plans"].is_array())
    for (const auto& p : doc["plans"]) {
      auto s = p.find("sandbox");
      if (s == p.end()) continue;
      auto k = p.find("sandbox_seal");
      if (k != p.end() && k->is_string() &&
          sandbox::plan_record_sealed(gates::project_id(w, *root), str(doc, "correlation_id"), str(p, "id"), *s,
                                      k->get<std::string>(), w.checking_key()))
        ++sealed_plans;
      else
        fail("plan " + str(p, "id") + "'s confinement record",
             "no valid seal: not the record yolo wrote when its executor started (edited, copied or older)");
    }
  if (sealed_plans) pass(std::to_string(sealed_plans) + " plan confinement record(s) sealed by yolo");

  // Which children ran without the sandbox ("sandbox": "off"): shown, not failed (the vision
  // approval covered the choice), so a reader of the record knows what it is worth.
  json unconfined = json::array();
  auto unconfined_in = [&](const std::string& what, const json& rec) {
    std::vector<const json*> todo{&rec};
    while (!todo.empty()) {
      const json* j = todo.back();
      todo.pop_back();
      if (j->is_object()) {
        if (auto s = j->find("sandbox"); s != j->end() && s->is_object() && s->value("mechanism", "") == "off") {
          unconfined.push_back(what + " (" + s->value("role", "?") + ")");
          return;
        }
        for (const auto& [k, v] : j->items()) todo.push_back(&v);
      } else if (j->is_array()) {
        for (const auto& v : *j) todo.push_back(&v);
      }
    }
  };
  if (doc.contains("plans") && doc["plans"].is_array())
    for (const auto& p : doc["plans"]) unconfined_in("plan " + str(p, "id"), p);
  for (stdfs::directory_iterator it(review_ledger::dir(*root), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json" || it->path().filename().string().front() == '.') continue;
    if (auto r = state::load_document(w, it->path(), "review-ledger"); r.ok() && r.doc.contains("reviews"))
      for (auto& [id, rec] : r.doc["reviews"].items()) unconfined_in("review of " + id, rec);
  }

  bool ok = failures.empty();
  if (o.json) {
    out::json_line(
        {{"ok", ok}, {"cmd", "verify"}, {"failures", failures}, {"passed", passed}, {"unconfined", unconfined}});
  } else {
    for (const auto& u : unconfined)
      out::line(out::sym(out::Sym::Warn) + " " + text::sanitize_for_terminal(u.get<std::string>()) +
                ": ran with the sandbox off (\"sandbox\": \"off\" in the config)");
    for (const auto& p : passed)
      out::line(out::sym(out::Sym::Ok) + " " + text::sanitize_for_terminal(p.get<std::string>()));
    for (const auto& f : failures)
      out::line(out::sym(out::Sym::Fail) + " " + text::sanitize_for_terminal(f["what"].get<std::string>()) + ": " +
                text::sanitize_for_terminal(f["problem"].get<std::string>()));
    if (ok)
      out::line(out::sym(out::Sym::Ok) + " verify: every approval, gate transition and review record checks out");
    else
      out::line(
          out::sym(out::Sym::Fail) + " verify: " + std::to_string(failures.size()) +
          " problem(s); an approval that does not count is made again by a person (`yolo execute` re-opens its gate), "
          "a review record that does not count is reviewed again (`yolo review`)");
  }
  return ok ? kExitOk : kExitFail;
}

const CommandRegistrar reg_verify{Command{
    "verify", "Re-check offline every approval, gate transition (audit log) and review record; exit 1 on any failure",
    [](CLI::App& sub) {
      auto o = std::make_shared<Options>();
      sub.add_option("--repo", o->repo,
                     "Project folder (default: the current folder or the nearest above holding .yolo-planning)");
      sub.add_flag("--json", o->json, "One JSON document on stdout");
      return [o](const Context& ctx) { return verify(ctx, *o); };
    }}};

}  // namespace
}  // namespace yolo::runner
