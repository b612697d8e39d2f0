// The watcher's core (`yolo watch`), stepped one event at a time: events in (a path under
// .yolo-planning changed, the settle timer fired, the kernel's event queue overflowed, a
// review batch ended, a phase was learnt, `yolo execute` or a gate request ended), actions out
// (arm the settle timer, review exactly these plans in this lane, request the vision gate,
// run execute, learn a phase, say a line). Files are read through the World's disk and time
// stamps come from its clock; it starts no process, owns no timer and makes no OS call, so a
// unit test drives it with a MemoryDisk and a FixedClock and fires the timers itself.
// runner/watcher.cc is its driver: inotify and timers in, processes and worker threads out.
// The smaller rules it applies are in protocol/watch/reconcile.h.
#pragma once
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/base/json.h"
#include "protocol/watch/reconcile.h"
#include "protocol/watch/watch_paths.h"
#include "protocol/watch/watch_read.h"
#include "protocol/ports/world.h"

namespace yolo::watch {

// What a line for people is marked with (the driver draws ✓ ⚠ ✗ ◆ ⏸ ○).
enum class Mark { Ok, Warn, Fail, Note, Pause, Skip };

struct Action {
  enum class Kind {
    ArmSettle,     // (re)start the settle timer: call settle() after `ms`
    ArmRetry,      // start the record-retry timer: call retry_fired() after `ms`
    Review,        // review exactly batch.plans (one batch per lane at a time); then reviews_ended()
    RequestGate,   // ask for the vision gate on ROADMAP.md; then gate_request_ended()
    RunExecute,    // start `yolo execute`; then execute_ended()
    Learn,         // learn_phase(dir, plans_only) (a worker thread may); then phase_learnt()
    ReloadConfig,  // config.json changed: load it (the driver reports errors) and call configure()
    Warm,          // every phase is known: the driver may parse siblings ahead
    Say,           // a line for the person; `event` is the JSON line (with its time stamp)
  };
  Kind kind = Kind::Say;
  long long ms = 0;
  ReviewBatch batch;
  std::filesystem::path dir;
  bool plans_only = false;
  Mark mark = Mark::Note;
  std::string text;
  json event;
};

// What the watcher follows of the run, a part of the core: the state's approvals as last
// loaded, whether a run is in progress, and when `yolo execute` runs (again). It says its
// lines through `say`; the core turns its answers into actions.
class RunFollower {
 public:
  using Say = std::function<void(Mark, std::string, json)>;
  RunFollower(const World& w, std::filesystem::path root, bool drive_asked, Say say, std::function<long long()> now_ms);
  // The state read again (announce: say what changed in the approvals).
  void load_state(bool announce);
  // Whether the approvals changed since last asked (and forgets it).
  bool take_approvals_changed() { return std::exchange(approvals_changed_, false); }
  bool active_run() const { return active_run_; }
  bool driving() const { return drive_asked_ || active_run_; }
  // Execute is wanted (force: even when not driving): true to start it now; false when one
  // runs (it runs again once that ends) or nothing drives it.
  bool want_execute(bool force);
  // Execute ended: its line, the state read again; true to start it again now.
  bool execute_ended(bool exited, int exit_code, const std::string& describe, const std::string& err_tail);
  bool execute_running() const { return exec_running_; }
  // The vision gate is wanted: true to request it now (false: a request is under way).
  bool want_gate_request() { return !std::exchange(gate_running_, true); }
  void gate_request_ended();

 private:
  void announce_approval_change(const json& d);
  long long now() const { return now_ms_ ? now_ms_() : 0; }

  World w_;
  std::filesystem::path root_;
  bool drive_asked_ = false;
  Say say_;
  std::function<long long()> now_ms_;
  std::string approvals_fp_, resumed_fp_, run_status_, last_state_error_, state_bytes_;
  bool state_cached_ = false, active_run_ = false, approvals_changed_ = false;
  bool exec_running_ = false, exec_rerun_ = false, gate_running_ = false;
  long long exec_t0_ = 0;
};

struct CoreOptions {
  std::filesystem::path root;  // the project root (holds .yolo-planning)
  bool review = true;          // review changed plans (not --no-review)
  bool drive_asked = false;    // --execute / execute --watch
  long long debounce_ms = 20;
  // A steady clock in milliseconds (durations said to people, the rescan backoff); unset: 0.
  std::function<long long()> now_ms;
  // The reason a folder under .yolo-planning cannot be listed (a loop of links, no
  // permission), "" when it can: the disk port lists nothing for such a folder, and a
  // person should hear why a phase is skipped. Unset: nothing is said.
  std::function<std::string(const std::filesystem::path&)> why_unlistable;
  // Told of every plan whose content the core sees change or go (the driver's caches of
  // parsed siblings): no decision hangs on it.
  std::function<void(const std::filesystem::path&)> plan_changed;
};

class Core {
 public:
  Core(const World& w, CoreOptions o);

  // ---- events ----
  // The first reconcile: the state and ROADMAP.md as they are, the phases listed (plans
  // counted; each phase is learnt after it, Action::Learn), SUMMARY hashes taken. With
  // drive_asked, execute runs at once.
  void start();
  // A path changed, appeared or went (an inotify event; `gone` when deleted or moved away).
  // Returns what it is. Arms the settle timer unless the path is noise.
  PathKind path_changed(const std::filesystem::path& p, bool gone = false);
  // The folder holding .yolo-planning saw it appear or go: rescan everything.
  void planning_replaced();
  // The kernel's queue overflowed (or watches were lost or recovered): rescan everything,
  // after a wait that grows while overflows keep coming.
  void overflow(const std::string& why);
  // Folders the watch limit left out got their watches back: rescan what changed there.
  void rescan_quietly();
  // The settle timer fired. git_busy: what git is in the middle of ("" when nothing).
  void settle(const std::string& git_busy = "");
  // A review batch ended. rows: each plan reviewed (its file, plan id and the content hash
  // the review recorded); recorded: every result was written.
  struct Reviewed {
    std::filesystem::path plan;
    std::string plan_id, hash;
  };
  // Its results could not all be written (a full disk): they are reviewed again after a pause
  // that grows while writing keeps failing. Before reviews_ended, so the line saying so comes
  // before each plan's verdict.
  void unrecorded(const std::vector<Reviewed>& rows);
  void reviews_ended(Lane lane, const std::vector<Reviewed>& rows, bool recorded, bool stopping = false);
  void retry_fired();
  void phase_learnt(LearntPhase p);
  // A phase's ledger was read ahead (during the debounce): taken unless it is stale.
  void ledger_read(const std::filesystem::path& phase_dir, LedgerRead r);
  // `yolo execute` ended: exited (else killed or not started) with exit_code; how it ended in
  // words (`describe`) and the last lines of its stderr.
  void execute_ended(bool exited, int exit_code, const std::string& describe = "", const std::string& err_tail = "");
  void gate_request_ended();
  // A folder could not be walked (a loop of links, no permission): said once per reason.
  void walk_error(const std::filesystem::path& p, const std::string& why);
  // The config as (re)loaded: whether reviews run agents (batch sizes).
  void configure(bool agents);

  // ---- actions ----
  std::vector<Action> take_actions();

  // ---- what the driver asks ----
  bool fresh_running() const { return queue_.busy(Lane::Fresh); }
  bool reviews_running() const { return queue_.busy(Lane::Fresh) || queue_.busy(Lane::Backlog); }
  size_t backlog() const { return queue_.queued(Lane::Backlog) + (queue_.busy(Lane::Backlog) ? 1 : 0); }
  bool phase_pending(const std::filesystem::path& dir) const { return phases_pending_.count(dir) > 0; }
  bool ledger_loaded(const std::filesystem::path& ledger) const { return ledger_seen_.count(ledger) > 0; }
  bool driving() const { return drives_execution(situation()); }
  bool execute_running() const { return run_.execute_running(); }
  size_t plans_listed() const { return plans_listed_; }
  size_t plans_known() const { return plan_hash_.size(); }
  std::vector<std::filesystem::path> known_plans(size_t max) const { return plan_hash_.paths(max); }
  std::optional<std::string> plan_hash(const std::filesystem::path& p) const { return plan_hash_.get(p); }
  long long debounce_ms() const { return o_.debounce_ms; }

 private:
  using Changed = std::map<std::filesystem::path, std::vector<std::filesystem::path>>;
  Situation situation() const { return {o_.review, o_.drive_asked, run_.active_run()}; }
  void say(Mark m, std::string text, json event);
  void arm(long long ms);
  void reconcile(bool initial);
  void scan_phase(const std::filesystem::path& dir, std::set<std::filesystem::path>& present, Changed& changed,
                  bool plans_too);
  void forget_missing(const std::function<bool(const std::filesystem::path&)>& missing, Changed& changed);
  void check_file(const std::filesystem::path& p, Changed& changed);
  void check_plan_hashed(const std::filesystem::path& p, const std::string& h, Changed& changed);
  void plan_gone(const std::filesystem::path& p, Changed& changed);
  void announce_changed(const std::filesystem::path& p);
  std::string plan_label(const std::filesystem::path& p) const;
  void load_all_ledgers();
  void load_ledger(const std::filesystem::path& file);
  void take_ledger(const std::filesystem::path& file, const LedgerRead& r);
  void ensure_phase(const std::filesystem::path& dir);
  void learn_next();
  void queue_reviews(const Changed& reviews, Lane lane);
  void pump();
  void say_backlog(size_t n);
  void maybe_backlog_done();
  void run_execute(bool force);
  static std::string phase_of_plan(const std::filesystem::path& plan);
  static std::string phase_of_ledger(const std::filesystem::path& ledger) { return ledger.stem().string(); }

  World w_;
  CoreOptions o_;
  std::filesystem::path planning_;
  bool agents_ = false;
  std::vector<Action> out_;
  bool started_ = false, bulk_scan_ = false, git_waiting_ = false;
  bool full_rescan_ = false, state_dirty_ = false, roadmap_dirty_ = false, config_dirty_ = false;
  bool summaries_changed_ = false;  // during one reconcile
  long long last_overflow_ms_ = -1, rescan_backoff_ms_ = 0;
  long long learn_t0_ = -1, backlog_t0_ = 0;
  long long now() const { return o_.now_ms ? o_.now_ms() : 0; }
  std::set<std::filesystem::path> dirty_files_, dirty_dirs_, dirty_ledgers_;
  std::set<std::string> walk_errors_;  // said already
  // What was seen and what was last reviewed.
  Digests plan_hash_, summary_hash_;
  ReviewRecords reviewed_;
  std::map<std::filesystem::path, size_t> ledger_seen_;  // ledger file -> fingerprint last loaded
  ReviewQueue queue_;
  // The phases learnt after the first reconcile (Action::Learn), one at a time.
  std::set<std::filesystem::path> phases_pending_;  // ledger and plans not learnt yet
  std::set<std::filesystem::path> plans_pending_;   // ledger loaded, plans not yet
  bool learning_ = false, learn_paused_ = false, learning_phases_ = false;
  size_t plans_listed_ = 0, learn_backlog_ = 0, backlog_total_ = 0;
  // Reviews not recorded (a full disk): reviewed again after a pause.
  std::set<std::filesystem::path> retry_plans_;
  long long retry_ms_ = 0;
  // The state and ROADMAP.md.
  std::string roadmap_hash_;
  RunFollower run_;
};

const char* to_string(Mark m);

}  // namespace yolo::watch
