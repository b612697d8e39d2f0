#include "runner/mcp_tools.h"

#include <algorithm>
#include <optional>
#include <system_error>

#include "protocol/state/config.h"
#include "protocol/ports/contain.h"
#include "protocol/ports/fs.h"
#include "protocol/gates/approvals.h"
#include "protocol/gates/gate_coverage.h"
#include "protocol/gates/gate_run.h"
#include "protocol/base/json_field.h"
#include "protocol/review/stage1.h"
#include "protocol/state/state.h"
#include "protocol/status/status.h"
#include "runner/approvers.h"

namespace yolo::runner::mcp {
namespace {

namespace stdfs = std::filesystem;

std::string dashed(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

using json_field::str;
// A string argument of a tool call ("" when absent or not a string).
std::string arg(const json& args, const char* key) { return str(args, key); }

bool has_planning_dir(const stdfs::path& root) {
  std::error_code ec;
  return stdfs::is_directory(root / ".yolo-planning", ec);
}

std::string no_planning_dir(const stdfs::path& root) {
  return "No .yolo-planning/ folder in " + root.string() +
         ": this is not a yolo project (start yolo mcp with --repo pointing at the project)";
}

// A path given by the client, resolved inside the project root (fs::contain: relative
// paths are taken from the root, absolute ones must lie inside it, and no symbolic link may
// lead out of it).
std::optional<stdfs::path> inside_root(const World& w, const stdfs::path& root, const std::string& given,
                                       const char* what, std::string& err) {
  auto c = w.files().contain(root, given, fs::AbsolutePaths::AllowInside);
  if (c.ok()) return c.path;
  if (c.refusal == fs::Contained::Refusal::Symlink)
    err = std::string(what) + " leads outside the project root " + root.string() + " (through a link): " + given;
  else
    err = std::string(what) + " must lie inside the project root " + root.string() + ": " + given;
  return std::nullopt;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// ---- review_plan ----------------------------------------------------------------------

ToolResult review_plan(const json& args, const ToolContext& ctx) {
  std::string err;
  auto plan = inside_root(ctx.world, ctx.root, arg(args, "plan_path"), "plan_path", err);
  if (!plan) return ToolResult::failure(err);
  std::optional<stdfs::path> phase;
  if (args.contains("phase_dir")) {
    phase = inside_root(ctx.world, ctx.root, arg(args, "phase_dir"), "phase_dir", err);
    if (!phase) return ToolResult::failure(err);
    std::error_code ec;
    if (!stdfs::is_directory(*phase, ec)) return ToolResult::failure("phase_dir is not a folder: " + phase->string());
  }
  Stage1Options opts;
  std::string note;
  auto cfg = load_config(ctx.world, ctx.root);
  if (!cfg.ok()) note = " (config: " + cfg.error + "; using defaults)";
  opts.max_tasks = cfg.config.max_tasks_per_plan;
  StructuralReview r = stage1_plan_file(ctx.world, *plan, phase, opts);
  ToolResult out;
  out.structured = r.to_json();
  Verdict v = r.verdict();
  size_t high = static_cast<size_t>(std::count_if(r.findings.begin(), r.findings.end(),
                                                  [](const Finding& f) { return f.severity == Severity::High; }));
  const char* sym = v == Verdict::Approve ? "✓" : v == Verdict::Conditional ? "⚠" : "✗";
  out.text = std::string(sym) + " Stage 1 review of " + arg(args, "plan_path") + ": " + to_string(v) + " (" +
             std::to_string(r.findings.size()) + " finding" + (r.findings.size() == 1 ? "" : "s") + ", " +
             std::to_string(high) + " high)" + note;
  for (const auto& f : r.findings)
    out.text += std::string("\n- [") + to_string(f.severity) + "] " + f.check + ": " + f.issue;
  return out;
}

// ---- request_human_approval -------------------------------------------------------------

ToolResult request_human_approval(const json& args, const ToolContext& ctx) {
  if (!has_planning_dir(ctx.root)) return ToolResult::failure(no_planning_dir(ctx.root));
  gates::RequestInput in;
  std::string type = arg(args, "gate_type");
  if (!type.empty()) {
    auto t = gates::parse_gate_type(type);
    if (!t) return ToolResult::failure("unknown gate_type: " + type);
    in.type = *t;
  }
  in.plan_path = arg(args, "plan_path");
  in.reason = arg(args, "reason");
  in.state_file = state::state_path(ctx.root).string();
  auto cfg = load_config(ctx.world, ctx.root);
  if (!cfg.ok()) return ToolResult::failure("Cannot request approval: " + cfg.error);
  CommandApprover approver(ctx.world);
  gates::GateRun run = gates::request_gate(ctx.world, ctx.root, cfg.config, in, &approver);
  if (!run.ok()) return ToolResult::failure(run.error);
  ToolResult out;
  out.structured = run.answer;
  const gates::Answer status = gates::answer_of(run.answer);
  std::string gate_type = str(run.answer, "gate_type");
  gate_type = std::string(gates::label_of(gate_type));
  std::string path = run.answer.contains("approval") ? str(run.answer["approval"], "plan_path") : in.plan_path;
  if (status == gates::Answer::Paused) {
    out.text = "⏸ " + gate_type + " gate: Awaiting human approval for " + path +
               ". Execution paused. Stop here: a person approves with `yolo approve` (gate " +
               str(run.answer, "gate_id") + ").";
  } else if (status == gates::Answer::Approved) {
    out.text = "✓ " + gate_type + " gate: cleared by its configured approver for " + path + ".";
  } else {
    out.text = "✗ " + gate_type + " gate: rejected by its configured approver for " + path + ".";
    if (run.answer.contains("feedback") && run.answer["feedback"].is_string())
      out.text += " Feedback: " + run.answer["feedback"].get<std::string>();
  }
  for (const auto& m : run.messages)
    if (out.text.find(m.text) == std::string::npos) out.text += "\n" + m.text;
  return out;
}

// ---- manage_hitl_gate ---------------------------------------------------------------------

json gate_view(const json& g) {
  json v = {{"gate_id", str(g, "id")}};
  for (auto it = g.begin(); it != g.end(); ++it)
    if (it.key() != "id") v[it.key()] = it.value();
  return v;
}

ToolResult list_gates(const ToolContext& ctx) {
  auto snap = state::load(ctx.world, ctx.root);
  if (!snap.ok()) return ToolResult::failure(snap.error);
  json doc = snap.doc;
  gates::adopt_legacy_approval(doc, "");  // a copy: listing never writes
  json list = json::array();
  for (const auto& g : gates::list_gates(doc, true)) list.push_back(gate_view(g));
  ToolResult out;
  out.structured = {{"action", "list"}, {"gates", list}};
  if (list.empty())
    out.text = "○ No open gates.";
  else {
    out.text = "⏸ " + std::to_string(list.size()) + " open gate" + (list.size() == 1 ? "" : "s") + ":";
    for (const auto& g : list) {
      out.text += "\n- " + str(g, "gate_id") + " (" + str(g, "gate_type") + ")";
      if (!str(g, "plan_path").empty()) out.text += " for " + str(g, "plan_path");
      if (!str(g, "reason").empty()) out.text += ": " + str(g, "reason");
      out.text += ", opened " + str(g, "created_at");
    }
  }
  return out;
}

ToolResult manage_hitl_gate(const json& args, const ToolContext& ctx) {
  if (!has_planning_dir(ctx.root)) return ToolResult::failure(no_planning_dir(ctx.root));
  const std::string action = arg(args, "action");
  if (action == "list") return list_gates(ctx);
  auto cfg = load_config(ctx.world, ctx.root);
  if (!cfg.ok()) return ToolResult::failure("Refused to " + action + ": " + cfg.error);
  const std::string refusal = "Refused: over MCP an agent may request approval, never " +
                              std::string(action == "approve" ? "grant" : "reject") +
                              " it. Stop here and ask the person responsible to run `yolo " + action +
                              "` in their terminal.";
  // mcp_can_approve counts only when a person approved the config that sets it (the vision
  // gate covers it), and never for the vision gate itself. Decided under the state's lock on
  // the exact gate resolved (gate_run.h Authorize), from one reading of config.json whose
  // value must be the one the counting vision approval covered: a config toggled between
  // two readings, or a legacy approval object adopted after the check, cannot slip through.
  const stdfs::path root = ctx.root;
  const World& w = ctx.world;
  gates::Authorize authorize = [&w, root, refusal](const json& state, const json& gate) -> std::string {
    auto read = w.files().read(root / ".yolo-planning" / "config.json", 16u << 20, /*text=*/false);
    json cfg_now = read.ok() ? json::parse(read.content, nullptr, false) : json();
    gates::McpResolution may = gates::mcp_may_resolve(state, gate, cfg_now, gates::now_of(w, root));
    if (may.allowed) return {};
    return may.why.empty() ? refusal : refusal + " (" + may.why + ")";
  };
  const std::string by = "mcp:" + ctx.client_name;
  const std::string gate_id = arg(args, "gate_id");
  const std::string feedback = arg(args, "feedback");
  CommandApprover approver(ctx.world);
  gates::GateRun run = action == "approve" ? gates::approve_gate(ctx.world, ctx.root, cfg.config, gate_id, by,
                                                                 &approver, false, nullptr, authorize)
                                           : gates::reject_gate(ctx.world, ctx.root, gate_id, by, feedback, authorize);
  if (!run.ok()) return ToolResult::failure(run.error);
  std::string status = str(run.gate, "status");
  ToolResult out;
  if (action == "approve" && !gates::has_status(run.gate, gates::GateStatus::Approved)) {
    // approve_gate retried a failed command approver instead of approving.
    std::string why = run.messages.empty() ? "the gate is still " + status : join(gates::texts(run.messages), "; ");
    return ToolResult::failure("Gate " + str(run.gate, "id") + " was not approved: " + why);
  }
  json fb = run.gate.contains("feedback") ? run.gate["feedback"] : json(nullptr);
  if (fb.is_null() && !feedback.empty()) fb = feedback;
  out.structured = {{"action", action},
                    {"gate_id", str(run.gate, "id")},
                    {"status", action == "approve" ? "resumed" : "rejected"},
                    {"feedback", fb},
                    {"approved_by", run.gate.contains("approved_by") ? run.gate["approved_by"] : json(nullptr)}};
  if (action == "approve")
    out.text = "✓ Gate " + str(run.gate, "id") + " approved by " + by + ": execution resumes.";
  else
    out.text = "✗ Gate " + str(run.gate, "id") + " rejected by " + by + ": the run is halted. Feedback: " + feedback;
  if (!run.messages.empty()) out.text += "\n" + join(gates::texts(run.messages), "\n");
  return out;
}

// ---- execution_status ------------------------------------------------------------------

std::string num(const json& j) { return j.is_number_integer() ? std::to_string(j.get<long long>()) : std::string("?"); }

ToolResult execution_status_tool(const json& /*args*/, const ToolContext& ctx) {
  if (!has_planning_dir(ctx.root)) return ToolResult::failure(no_planning_dir(ctx.root));
  json s = execution_status(ctx.world, ctx.root);
  if (!s.value("ok", false)) return ToolResult::failure(s.value("error", std::string("cannot read the state")));
  ToolResult out;
  if (!s.value("exists", false)) {
    out.text = "○ No run yet: " + s.value("state_file", std::string()) + " does not exist.";
  } else {
    std::string status = s["status"].is_string() ? s["status"].get<std::string>() : "unknown";
    std::string phase_name = s["phase_name"].is_string() ? " (" + s["phase_name"].get<std::string>() + ")" : "";
    out.text = "◆ Phase " + num(s["phase"]) + phase_name + ": " + status + ", wave " + num(s["wave"]) + " of " +
               num(s["total_waves"]);
    if (s["counts"].is_object() && !s["counts"].empty()) {
      out.text += "; plans:";
      for (auto& [k, v] : s["counts"].items()) out.text += " " + k + " " + v.dump();
    }
    size_t open = s["open_gates"].is_array() ? s["open_gates"].size() : 0;
    if (open) {
      for (const auto& g : s["open_gates"])
        out.text += "\n⏸ open gate " + str(g, "id") + " (" + str(g, "gate_type") + ") for " + str(g, "plan_path");
    }
  }
  out.structured = std::move(s);
  return out;
}

std::vector<Tool> make_tools() {
  std::vector<Tool> t;
  t.push_back(Tool{
      "request_human_approval", "Request human approval",
      "Open a human approval gate (default: the vision gate) for a file such as .yolo-planning/ROADMAP.md. "
      "The run's state becomes awaiting_approval and execution pauses until a person approves. After calling "
      "it, stop: do not continue the work until the gate is approved.",
      json{{"readOnlyHint", false}, {"destructiveHint", false}, {"idempotentHint", true}, {"openWorldHint", false}},
      request_human_approval});
  t.push_back(Tool{
      "manage_hitl_gate", "List, approve or reject gates",
      "List the open human-in-the-loop gates (gate_id, gate_type, reason, created_at), or approve / reject one. "
      "Approving or rejecting is for the person responsible, at a terminal (`yolo approve`).",
      json{{"readOnlyHint", false}, {"destructiveHint", false}, {"idempotentHint", false}, {"openWorldHint", false}},
      manage_hitl_gate});
  t.push_back(
      Tool{"review_plan", "Review a plan (Stage 1)",
           "Run the deterministic structural pre-check of a PLAN.md (frontmatter, task count, must_haves, wave; with "
           "phase_dir also file paths and cross-plan checks) and return the verdict (approve, conditional, reject) "
           "with its findings.",
           json{{"readOnlyHint", true}, {"openWorldHint", false}}, review_plan});
  t.push_back(
      Tool{"execution_status", "Execution status",
           "Show the run of the project: phase, waves, each plan's state and review outcome, the approval and the "
           "open gates (what `yolo status --json` prints).",
           json{{"readOnlyHint", true}, {"openWorldHint", false}}, execution_status_tool});
  return t;
}

}  // namespace

ToolResult ToolResult::failure(std::string message) {
  ToolResult r;
  r.is_error = true;
  r.text = std::move(message);
  return r;
}

std::string Tool::input_schema() const { return "mcp-" + dashed(name) + "-input"; }
std::string Tool::output_schema() const { return "mcp-" + dashed(name) + "-output"; }

const std::vector<Tool>& tools() {
  static const std::vector<Tool> all = make_tools();
  return all;
}

const Tool* find_tool(const std::string& name) {
  for (const auto& t : tools())
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace yolo::runner::mcp
