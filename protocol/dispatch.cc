#include "protocol/dispatch.h"

#include "protocol/argv_template.h"
#include "protocol/text.h"

namespace yolo::dispatch {
namespace {

std::string sget(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int attempt_of(const json& r) {
  auto it = r.find("attempt");
  if (it == r.end() || !it->is_number_integer()) return 0;
  long long a = it->get<long long>();
  return a > 0 && a < 1000000 ? static_cast<int>(a) : 0;
}

}  // namespace

Start decide_start(const json& record, bool plan_failed) {
  Start s;
  if (!record.is_object()) return s;
  int a = attempt_of(record);
  std::string state = sget(record, "state"), handle = sget(record, "handle");
  if (a == 0) return s;
  // submit may have started the job before the run stopped (or before its submit failed or
  // timed out): the same attempt again, which the adapter answers with that job; never a
  // second one, whether or not the plan was marked failed.
  if (state == "submitting" || (state == "submitted" && handle.empty())) {
    s.attempt = a;
    return s;
  }
  // Submitted: the job may still run (a yolo stopped, or one that gave up on an engine it
  // could neither reach nor cancel through): wait again on the same handle.
  if (state == "submitted") {
    s.kind = Start::Kind::Reattach;
    s.attempt = a;
    s.handle = handle;
    return s;
  }
  // Done and not failed: ended well, its branch not yet gated when the run stopped.
  if (state == "done" && !plan_failed && !handle.empty()) {
    s.kind = Start::Kind::Reattach;
    s.attempt = a;
    s.handle = handle;
    return s;
  }
  // A new job. Done: its branch was gated and failed. Failed, cancelled: it may have pushed
  // its branch anyway (after yolo stopped waiting): looked up before a new job runs.
  s.attempt = a + 1;
  if (state != "done") s.previous_attempt = a;
  return s;
}

std::string branch_for_attempt(const std::string& plan_branch, int attempt) {
  return attempt > 1 ? plan_branch + "-a" + std::to_string(attempt) : plan_branch;
}

Submitted parse_submit_output(const std::string& out) {
  Submitted r;
  auto ls = text::lines(out);
  for (auto it = ls.rbegin(); it != ls.rend(); ++it) {
    std::string l(text::trim(*it));
    if (l.empty() || l.front() != '{') continue;
    json j = json::parse(l, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    std::string h = sget(j, "handle");
    if (h.empty()) continue;
    if (h.size() > 1024 || h.find_first_of(std::string("\n\r\0", 3)) != std::string::npos) {
      r.error = "submit printed a handle that is not one short line";
      return r;
    }
    r.handle = h;
    r.url = sget(j, "url");
    r.job_name = sget(j, "job_name");
    auto re = j.find("reused");
    r.reused = re != j.end() && re->is_boolean() && re->get<bool>();
    return r;
  }
  r.error = "submit printed no JSON object with a \"handle\" on stdout";
  return r;
}

WaitResult interpret_wait(bool exited, int code) {
  if (!exited) return WaitResult::Error;
  switch (code) {
    case 0:
      return WaitResult::Done;
    case 1:
      return WaitResult::Failed;
    case 2:
      return WaitResult::Unknown;
    case 3:
      return WaitResult::Unreachable;
    default:
      return WaitResult::Error;
  }
}

bool fetch_after_wait(WaitResult w, bool branch_on_remote) {
  return w == WaitResult::Done || (w == WaitResult::Unknown && branch_on_remote);
}

bool gives_up(WaitResult w) { return w == WaitResult::Unreachable || w == WaitResult::Error; }

json record_submitting(int attempt) { return {{"attempt", attempt}, {"state", "submitting"}}; }

json record_submitted(int attempt, const Submitted& s, const std::string& now) {
  json r = {{"attempt", attempt}, {"state", "submitted"}, {"handle", s.handle}, {"submitted_at", now}};
  if (!s.url.empty()) r["url"] = s.url;
  if (!s.job_name.empty()) r["job_name"] = s.job_name;
  if (s.reused) r["reused"] = true;
  return r;
}

json record_ended(json record, const std::string& state, const std::string& now) {
  if (!record.is_object()) record = json::object();
  record["state"] = state;
  record["ended_at"] = now;
  return record;
}

std::vector<std::string> check_templates(const Templates& t) {
  std::vector<std::string> errs;
  auto has = [](const std::vector<std::string>& v, const std::string& p) {
    for (const auto& a : v)
      if (a.find(p) != std::string::npos) return true;
    return false;
  };
  if (t.submit.empty()) errs.push_back("dispatch.submit: an argv template is required");
  if (t.wait.empty()) errs.push_back("dispatch.wait: an argv template is required");
  if (t.cancel.empty()) errs.push_back("dispatch.cancel: an argv template is required");
  if (!t.wait.empty() && !has(t.wait, "{handle}")) errs.push_back("dispatch.wait: the template has no {handle}");
  if (!t.cancel.empty() && !has(t.cancel, "{handle}")) errs.push_back("dispatch.cancel: the template has no {handle}");
  if (!t.submit.empty() && has(t.submit, "{handle}"))
    errs.push_back("dispatch.submit: {handle} is not known before submit");
  for (const char* p : {"{branch}", "{attempt}", "{plan_id}", "{correlation_id}"})
    if (!t.submit.empty() && !has(t.submit, p))
      errs.push_back(std::string("dispatch.submit: the template has no ") + p +
                     " (the job must be named from the plan, run and attempt, and push the plan's branch)");
  return errs;
}

std::vector<std::string> submit_argv(const std::vector<std::string>& tmpl, const std::vector<std::string>& executor,
                                     const std::map<std::string, std::string>& vars) {
  std::vector<std::string> out = expand_argv(tmpl, vars);
  if (!tmpl.empty() && tmpl.back() == "--")
    for (auto& a : expand_argv(executor, vars)) out.push_back(std::move(a));
  return out;
}

const std::vector<std::string>& withheld_env() {
  static const std::vector<std::string> v = {"YOLO_APPROVAL_KEY_FILE", "YOLO_SIGNING_KEY", "YOLO_AGENT",
                                             "YOLO_GATE_ID",           "YOLO_GATE_TYPE",   "YOLO_DISPATCH_JOB"};
  return v;
}

}  // namespace yolo::dispatch
