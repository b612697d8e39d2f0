#include "protocol/run/dispatch.h"

#include <algorithm>

#include "protocol/base/argv_template.h"
#include "protocol/base/sha256.h"
#include "protocol/base/text.h"

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

const char* job_state_name(JobState s) {
  switch (s) {
    case JobState::Submitting: return "submitting";
    case JobState::Submitted: return "submitted";
    case JobState::Done: return "done";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
  }
  return "failed";
}

std::optional<JobState> job_state(const json& record) {
  const std::string name = record.is_object() ? sget(record, "state") : std::string();
  for (JobState s : {JobState::Submitting, JobState::Submitted, JobState::Done, JobState::Failed, JobState::Cancelled})
    if (name == job_state_name(s)) return s;
  return std::nullopt;
}

Start decide_start(const json& record, bool plan_failed) {
  Start s;
  if (!record.is_object()) return s;
  int a = attempt_of(record);
  const std::optional<JobState> state = job_state(record);
  const std::string handle = sget(record, "handle");
  if (a == 0) return s;
  // submit may have started the job before the run stopped (or before its submit failed or
  // timed out): the same attempt again, which the adapter answers with that job; never a
  // second one, whether or not the plan was marked failed.
  if (state == JobState::Submitting || (state == JobState::Submitted && handle.empty())) {
    s.attempt = a;
    return s;
  }
  // Submitted: the job may still run (a yolo stopped, or one that gave up on an engine it
  // could neither reach nor cancel through): wait again on the same handle.
  if (state == JobState::Submitted) {
    s.kind = Start::Kind::Reattach;
    s.attempt = a;
    s.handle = handle;
    return s;
  }
  // Done and not failed: ended well, its branch not yet gated when the run stopped.
  if (state == JobState::Done && !plan_failed && !handle.empty()) {
    s.kind = Start::Kind::Reattach;
    s.attempt = a;
    s.handle = handle;
    return s;
  }
  // A new job. Done: its branch was gated and failed. Failed, cancelled: it may have pushed
  // its branch anyway (after yolo stopped waiting): looked up before a new job runs.
  s.attempt = a + 1;
  if (state != JobState::Done) s.previous_attempt = a;
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

int wait_exit_code(WaitResult w) {
  switch (w) {
    case WaitResult::Done:
      return 0;
    case WaitResult::Failed:
      return 1;
    case WaitResult::Unknown:
      return 2;
    case WaitResult::Unreachable:
      return 3;
    default:
      return 4;
  }
}

std::string wait_reason(std::string_view err) {
  std::string why;
  const std::string tail = text::tail_lines(err, 2);  // lines() views it: it must outlive the loop
  for (const auto& l : text::lines(tail))
    if (!text::trim(l).empty()) why += (why.empty() ? "" : "; ") + std::string(text::trim(l));
  return why;
}

std::optional<std::string> status_line(std::string_view err_line) {
  if (err_line.rfind("status: ", 0) != 0) return std::nullopt;
  return std::string(err_line.substr(8));
}

std::string engine_status(std::string_view said) {
  std::string status(text::trim(said));
  if (status.size() > 300) status.resize(300);
  return status;
}

long long wait_deadline_ms(long long wait_timeout_ms, long long wait_wave_timeout_ms) {
  return wait_wave_timeout_ms > 0 ? wait_wave_timeout_ms : wait_timeout_ms > 0 ? wait_timeout_ms : 24LL * 3600 * 1000;
}

long long unreachable_seconds(const json& raw_config) {
  long long ms = 600000;
  if (auto d = raw_config.find("dispatch"); d != raw_config.end() && d->is_object())
    if (auto u = d->find("unreachable_timeout_ms"); u != d->end() && u->is_number_integer())
      ms = std::max(1000LL, u->get<long long>());
  return ms / 1000;
}

std::set<std::string> remote_heads(std::string_view ls_remote_out) {
  std::set<std::string> heads;
  for (const auto& l : text::lines(ls_remote_out)) {
    auto tab = l.find('\t');
    if (tab != std::string_view::npos) heads.insert(std::string(text::trim(l.substr(tab + 1))));
  }
  return heads;
}

json record_submitting(int attempt) { return {{"attempt", attempt}, {"state", job_state_name(JobState::Submitting)}}; }

json record_submitted(int attempt, const Submitted& s, const std::string& now) {
  json r = {{"attempt", attempt}, {"state", job_state_name(JobState::Submitted)}, {"handle", s.handle}, {"submitted_at", now}};
  if (!s.url.empty()) r["url"] = s.url;
  if (!s.job_name.empty()) r["job_name"] = s.job_name;
  if (s.reused) r["reused"] = true;
  return r;
}

json record_ended(json record, JobState state, const std::string& now) {
  if (!record.is_object()) record = json::object();
  record["state"] = job_state_name(state);
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
                                     const std::map<std::string, std::string>& vars,
                                     const std::vector<std::string>& extra_opts) {
  std::vector<std::string> out = expand_argv(tmpl, vars);
  bool ends_in_dashes = !tmpl.empty() && tmpl.back() == "--";
  if (!extra_opts.empty()) {
    // Before the "--" that ends the options (the template's own, or the one before the
    // executor it wrote itself), else at the end.
    auto at = std::find(out.begin(), out.end(), std::string("--"));
    out.insert(at, extra_opts.begin(), extra_opts.end());
  }
  if (ends_in_dashes)
    for (auto& a : expand_argv(executor, vars)) out.push_back(std::move(a));
  return out;
}

namespace {

// "90", "90m", "2h", "1d" -> minutes; "4096", "512M", "4G", "1T" -> MiB. 0 and an error on
// anything else (a unit yolo does not know, a fraction, a negative number, an overflow).
long long with_unit(const json& v, const char* key, bool time, std::vector<std::string>& errors) {
  std::string t;
  if (v.is_number_integer()) {
    long long n = v.get<long long>();
    if (n >= 1 && n <= 100000000LL) return n;
    errors.push_back(std::string("resources.") + key + ": " + std::to_string(n) + " is out of range");
    return 0;
  }
  if (v.is_string()) t = v.get<std::string>();
  size_t k = 0;
  long long n = 0;
  while (k < t.size() && k < 9 && t[k] >= '0' && t[k] <= '9') n = n * 10 + (t[k++] - '0');
  std::string unit = t.substr(k);
  long long mul = 0;
  if (time)
    mul = unit == "" || unit == "m" || unit == "min" ? 1 : unit == "h" ? 60 : unit == "d" ? 1440 : 0;
  else
    mul = unit == "" || unit == "M" || unit == "Mi" ? 1
          : unit == "G" || unit == "Gi"              ? 1024
          : unit == "T" || unit == "Ti"              ? 1024 * 1024
                                                     : 0;
  if (k == 0 || n < 1 || mul == 0 || !v.is_string()) {
    errors.push_back(std::string("resources.") + key + ": " + (v.is_string() ? "'" + t + "'" : v.dump()) +
                     (time ? " is not a time limit (minutes, or with m, h or d: \"90m\", \"2h\")"
                           : " is not an amount of memory (MiB, or with M, G or T: \"512M\", \"4G\")"));
    return 0;
  }
  return n * mul;
}

int whole(const json& v, const char* key, int min, std::vector<std::string>& errors) {
  if (v.is_number_integer() && v.get<long long>() >= min && v.get<long long>() <= 100000)
    return static_cast<int>(v.get<long long>());
  errors.push_back(std::string("resources.") + key + ": " + v.dump() + " is not a whole number >= " +
                   std::to_string(min));
  return 0;
}

}  // namespace

Resources resources_of(const json& frontmatter, std::vector<std::string>& errors) {
  Resources r;
  if (!frontmatter.is_object()) return r;
  auto it = frontmatter.find("resources");
  if (it == frontmatter.end() || it->is_null()) return r;
  if (!it->is_object()) {
    errors.push_back("resources: must be a map {time, cpus, memory, gpus}");
    return r;
  }
  for (auto& [k, v] : it->items()) {
    if (k == "time")
      r.time_minutes = with_unit(v, "time", true, errors);
    else if (k == "memory")
      r.memory_mb = with_unit(v, "memory", false, errors);
    else if (k == "cpus")
      r.cpus = whole(v, "cpus", 1, errors);
    else if (k == "gpus")
      r.gpus = whole(v, "gpus", 0, errors);
    else
      errors.push_back("resources." + k + ": not a resource yolo knows (time, cpus, memory, gpus)");
  }
  return r;
}

std::vector<std::string> resources_options(const Resources& r) {
  std::vector<std::string> o;
  if (r.time_minutes > 0) o.insert(o.end(), {"--time-minutes", std::to_string(r.time_minutes)});
  if (r.cpus > 0) o.insert(o.end(), {"--cpus", std::to_string(r.cpus)});
  if (r.memory_mb > 0) o.insert(o.end(), {"--memory-mb", std::to_string(r.memory_mb)});
  if (r.gpus > 0) o.insert(o.end(), {"--gpus", std::to_string(r.gpus)});
  return o;
}

std::string resources_key(const Resources& r) {
  std::string k;
  for (const auto& o : resources_options(r)) k += (k.empty() ? "" : " ") + o;
  return k;
}

std::vector<std::string> check_wave_templates(const std::vector<std::string>& submit_wave,
                                              const std::vector<std::string>& wait_wave) {
  std::vector<std::string> errs;
  auto has = [](const std::vector<std::string>& v, const std::string& p) {
    for (const auto& a : v)
      if (a.find(p) != std::string::npos) return true;
    return false;
  };
  if (submit_wave.empty() && wait_wave.empty()) return errs;
  if (submit_wave.empty()) errs.push_back("dispatch.submit_wave: required with dispatch.wait_wave");
  if (wait_wave.empty()) errs.push_back("dispatch.wait_wave: required with dispatch.submit_wave");
  if (!submit_wave.empty() && !has(submit_wave, "{tasks}"))
    errs.push_back("dispatch.submit_wave: the template has no {tasks} (the file of the wave's tasks)");
  if (!submit_wave.empty() && !has(submit_wave, "{correlation_id}"))
    errs.push_back("dispatch.submit_wave: the template has no {correlation_id} (the array is named from the run)");
  if (!submit_wave.empty() && has(submit_wave, "{handle}"))
    errs.push_back("dispatch.submit_wave: {handle} is not known before submit");
  if (!wait_wave.empty() && !has(wait_wave, "{handle}"))
    errs.push_back("dispatch.wait_wave: the template has no {handle}");
  return errs;
}

Reattached group_reattached(const std::vector<std::pair<size_t, json>>& records, size_t max_tasks) {
  Reattached r;
  std::map<std::string, size_t> array_of;  // handle -> index in r.arrays
  for (const auto& [plan, rec] : records) {
    const std::string handle = rec.is_object() ? rec.value("wave_handle", "") : "";
    auto idx = rec.is_object() ? rec.find("wave_index") : rec.end();
    const bool index = idx != rec.end() && idx->is_number_integer() && idx->get<long long>() >= 0 &&
                       idx->get<unsigned long long>() < max_tasks;
    if (handle.empty() || !index) {
      r.alone.push_back(plan);
      continue;
    }
    const size_t k = idx->get<size_t>();
    auto [it, fresh] = array_of.emplace(handle, r.arrays.size());
    if (fresh) r.arrays.push_back({handle, rec.value("wave_key", ""), {}});
    std::vector<size_t>& at = r.arrays[it->second].at;
    if (k < at.size() && at[k] != kNoPlan) {  // another plan's task
      r.alone.push_back(plan);
      continue;
    }
    if (k >= at.size()) at.resize(k + 1, kNoPlan);
    at[k] = plan;
  }
  return r;
}

std::vector<WaveArray> form_wave_arrays(const std::string& correlation_id, std::vector<WaveCandidate> c) {
  std::stable_sort(c.begin(), c.end(), [](const WaveCandidate& a, const WaveCandidate& b) {
    return a.resources_key != b.resources_key ? a.resources_key < b.resources_key : a.plan_id < b.plan_id;
  });
  std::vector<WaveArray> out;
  std::string key_text;
  for (size_t k = 0; k < c.size(); ++k) {
    if (k == 0 || c[k].resources_key != c[k - 1].resources_key) {
      if (!out.empty()) out.back().key = sha256_hex(key_text).substr(0, 12);
      out.emplace_back();
      key_text = correlation_id + "\n" + c[k].resources_key + "\n";
    }
    out.back().plans.push_back(c[k].plan);
    key_text += c[k].plan_id + "\n" + std::to_string(c[k].attempt) + "\n";
  }
  if (!out.empty()) out.back().key = sha256_hex(key_text).substr(0, 12);
  return out;
}

std::vector<std::string> task_arguments(const std::vector<std::string>& plan_submit_argv) {
  auto first = std::find_if(plan_submit_argv.begin(), plan_submit_argv.end(),
                            [](const std::string& a) { return a.rfind("--", 0) == 0; });
  return std::vector<std::string>(first, plan_submit_argv.end());
}

std::string tasks_file(const std::vector<std::vector<std::string>>& tasks) {
  std::string out;
  for (const auto& t : tasks) {
    out += std::to_string(t.size());
    out.push_back('\0');
    for (const auto& a : t) {
      out += a;
      out.push_back('\0');
    }
  }
  return out;
}

WaveSubmitted parse_wave_submit_output(const std::string& out, size_t n_tasks) {
  WaveSubmitted r;
  auto ls = text::lines(out);
  for (auto it = ls.rbegin(); it != ls.rend(); ++it) {
    std::string l(text::trim(*it));
    if (l.empty() || l.front() != '{') continue;
    json j = json::parse(l, nullptr, false);
    if (j.is_discarded() || !j.is_object() || sget(j, "handle").empty()) continue;
    auto one_line = [](const std::string& h) {
      return !h.empty() && h.size() <= 1024 && h.find_first_of(std::string("\n\r\0", 3)) == std::string::npos;
    };
    r.handle = sget(j, "handle");
    if (!one_line(r.handle)) {
      r.error = "submit_wave printed a handle that is not one short line";
      return r;
    }
    r.url = sget(j, "url");
    r.job_name = sget(j, "job_name");
    auto re = j.find("reused");
    r.reused = re != j.end() && re->is_boolean() && re->get<bool>();
    auto t = j.find("tasks");
    if (t == j.end() || !t->is_array() || t->size() != n_tasks) {
      r.error = "submit_wave printed " +
                (t != j.end() && t->is_array() ? std::to_string(t->size()) : std::string("no")) +
                " task handles for " + std::to_string(n_tasks) + " tasks";
      return r;
    }
    for (const auto& h : *t) {
      if (!h.is_string() || !one_line(h.get<std::string>())) {
        r.error = "submit_wave printed a task handle that is not one short line";
        r.tasks.clear();
        return r;
      }
      r.tasks.push_back(h.get<std::string>());
    }
    return r;
  }
  r.error = "submit_wave printed no JSON object with a \"handle\" on stdout";
  return r;
}

json record_wave_submitting(int attempt, const std::string& base, const std::string& key) {
  json r = record_submitting(attempt);
  r["base"] = base;
  r["wave_key"] = key;
  return r;
}

json record_wave_submitted(int attempt, const WaveSubmitted& ws, size_t k, const std::string& base,
                           const std::string& key, const std::string& now) {
  Submitted s;
  s.handle = k < ws.tasks.size() ? ws.tasks[k] : std::string();
  s.url = ws.url;
  s.job_name = ws.job_name;
  s.reused = ws.reused;
  json r = record_submitted(attempt, s, now);
  r["base"] = base;
  r["wave_key"] = key;
  r["wave_handle"] = ws.handle;
  r["wave_index"] = k;
  return r;
}

WaveLine parse_wave_line(std::string_view line, size_t n_tasks) {
  WaveLine w;
  if (line.rfind("task ", 0) != 0) return w;
  line.remove_prefix(5);
  size_t k = 0, digits = 0;
  while (digits < line.size() && digits < 9 && line[digits] >= '0' && line[digits] <= '9')
    k = k * 10 + static_cast<size_t>(line[digits++] - '0');
  if (digits == 0 || digits >= line.size() || line[digits] != ' ' || k >= n_tasks) return w;
  line.remove_prefix(digits + 1);
  auto word_end = line.find(' ');
  std::string_view word = line.substr(0, word_end);
  std::string rest = word_end == std::string_view::npos ? std::string() : std::string(text::trim(line.substr(word_end)));
  if (word == "status" && !rest.empty())
    w.kind = WaveLine::Kind::Status;
  else if (word == "done")
    w.kind = WaveLine::Kind::Done;
  else if (word == "failed")
    w.kind = WaveLine::Kind::Failed;
  else if (word == "unknown")
    w.kind = WaveLine::Kind::Unknown;
  else if (word == "log")
    w.kind = WaveLine::Kind::Log;
  else
    return w;
  w.index = k;
  w.text = rest;
  return w;
}

WaitResult wave_line_result(WaveLine::Kind k) {
  switch (k) {
    case WaveLine::Kind::Done:
      return WaitResult::Done;
    case WaveLine::Kind::Failed:
      return WaitResult::Failed;
    case WaveLine::Kind::Unknown:
      return WaitResult::Unknown;
    default:
      return WaitResult::Error;
  }
}

WaitResult wave_exit_result(bool exited, int code) {
  if (!exited) return WaitResult::Error;
  if (code == 2) return WaitResult::Unknown;
  if (code == 3) return WaitResult::Unreachable;
  return WaitResult::Error;  // 0 or 1 with a task unreported: the adapter broke the contract
}

const std::vector<std::string>& withheld_env() {
  static const std::vector<std::string> v = {"YOLO_APPROVAL_KEY_FILE", "YOLO_SIGNING_KEY", "YOLO_AGENT",
                                             "YOLO_GATE_ID",           "YOLO_GATE_TYPE",   "YOLO_DISPATCH_JOB"};
  return v;
}

}  // namespace yolo::dispatch
