#include "runner/git.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "protocol/base/text.h"
#include "runner/subprocess.h"

namespace yolo::runner {
namespace {

// Settings every git process of yolo's runs with, whatever the repository's config says: the
// config is a file an agent outside yolo (or one of an older run) may have written, and these
// keys name programs git runs (hooks, fsmonitor, external diff, pager, editor, askpass,
// credential helpers, ssh, gpg, proxies).
const std::vector<std::string>& fixed_overrides() {
  static const std::vector<std::string> o = {
      "core.hooksPath=/dev/null", "core.fsmonitor=false",      "core.sshCommand=ssh",   "core.pager=cat",
      "core.editor=true",         "core.askPass=",             "credential.helper=",    "diff.external=",
      "core.gitProxy=",           "core.alternateRefsCommand=", "commit.gpgSign=false", "tag.gpgSign=false",
      "protocol.ext.allow=never", "sequence.editor=true",      "uploadpack.packObjectsHook=",
      "gc.auto=0",                "maintenance.auto=false"};
  return o;
}

// The attribute drivers the repository's config defines (filter.NAME.clean, diff.NAME.textconv,
// merge.NAME.driver, ...), each set empty: a filter or textconv then runs nothing; a merge that
// needs a custom driver fails rather than running it. Read once per repository with
// `git config --list`, which runs nothing of the repository's.
std::vector<std::string> driver_overrides(const std::filesystem::path& root) {
  static std::mutex mu;
  static std::map<std::string, std::vector<std::string>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(root.string()); it != cache.end()) return it->second;
  SpawnSpec s;
  s.argv = {"git", "-C", root.string(), "config", "--list", "-z", "--includes"};
  s.unset_env = git_hook_env();
  s.env = {{"GIT_TERMINAL_PROMPT", "0"}, {"LC_ALL", "C"}};
  s.timeout_ms = 10000;
  s.output_cap = 1 << 20;
  SpawnResult r = run_process(s);
  std::set<std::string> out;
  if (r.ok())
    for (size_t at = 0; at < r.out.size();) {
      size_t end = r.out.find('\0', at);
      if (end == std::string::npos) end = r.out.size();
      std::string entry = r.out.substr(at, end - at);
      at = end + 1;
      std::string key = entry.substr(0, entry.find('\n'));
      std::string lower = key;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      auto first = lower.find('.'), last = lower.rfind('.');
      if (first == std::string::npos || last == first) continue;
      std::string section = lower.substr(0, first), name = key.substr(first + 1, last - first - 1),
                  var = lower.substr(last + 1);
      if (section == "filter") {
        for (const char* v : {"clean", "smudge", "process"}) out.insert("filter." + name + "." + v + "=");
        out.insert("filter." + name + ".required=false");
      } else if (section == "diff" && (var == "textconv" || var == "command")) {
        out.insert("diff." + name + ".textconv=");
        out.insert("diff." + name + ".command=");
      } else if (section == "merge" && var == "driver") {
        out.insert("merge." + name + ".driver=");
      } else if (section == "remote" && (var == "uploadpack" || var == "receivepack" || var == "proxy")) {
        out.insert("remote." + name + "." + var + "=");
      }
    }
  return cache[root.string()] = std::vector<std::string>(out.begin(), out.end());
}

SpawnSpec git_spec(const std::filesystem::path& root, const std::vector<std::string>& args, long long timeout_ms,
                   size_t output_cap) {
  SpawnSpec s;
  s.argv = {"git", "-C", root.string()};
  for (const auto& o : safe_git_config(root)) {
    s.argv.push_back("-c");
    s.argv.push_back(o);
  }
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  // A git hook (or `git --git-dir`) exports these for its own repository; inherited, they
  // would make `git -C ROOT` answer about that repository instead of ROOT.
  s.unset_env = git_hook_env();
  s.env = {{"GIT_TERMINAL_PROMPT", "0"}, {"GIT_OPTIONAL_LOCKS", "0"}, {"LC_ALL", "C"}, {"GIT_PAGER", "cat"}};
  s.timeout_ms = timeout_ms;
  s.output_cap = output_cap;
  return s;
}

std::string first_line(std::string_view s) {
  auto ls = text::lines(text::trim(s));
  return ls.empty() ? std::string() : std::string(text::trim(ls.front()));
}

}  // namespace

std::vector<std::string> safe_git_config(const std::filesystem::path& root) {
  std::vector<std::string> o = fixed_overrides();
  auto d = driver_overrides(root);
  o.insert(o.end(), d.begin(), d.end());
  return o;
}

GitCli::GitCli(std::filesystem::path root, long long timeout_ms) : root_(std::move(root)), timeout_ms_(timeout_ms) {}

GitCli::Answer GitCli::git(const std::vector<std::string>& args, size_t output_cap, std::string stdin_data) {
  ++started_;
  SpawnSpec spec = git_spec(root_, args, timeout_ms_, output_cap);
  spec.stdin_data = std::move(stdin_data);
  SpawnResult r = run_process(spec);
  Answer a;
  if (r.outcome != SpawnResult::Outcome::Exited) {
    last_error_ = "git " + (args.empty() ? std::string() : args.front()) + " " + r.describe();
    return a;
  }
  a.ran = true;
  a.status = r.exit_code;
  if (r.out_truncated()) {
    a.ran = false;
    last_error_ = "git " + args.front() + " printed more than " + std::to_string(output_cap) + " bytes";
    return a;
  }
  a.out = std::move(r.out);
  a.err = std::move(r.err);
  return a;
}

bool GitCli::is_repo() {
  if (is_repo_) return *is_repo_;
  Answer a = git({"rev-parse", "--is-inside-work-tree"});
  if (!a.ran) {
    is_repo_ = false;
    return false;
  }
  is_repo_ = a.status == 0 && text::trim(a.out) == "true";
  if (!*is_repo_) {
    std::string why = first_line(a.err);
    last_error_ = why.empty() ? root_.string() + " is not inside a git work tree" : why;
  }
  return *is_repo_;
}

std::optional<bool> GitCli::commit_exists(const std::string& hash) {
  if (!is_commit_hash(hash)) return false;  // never on a command line
  if (full_ids_.count(hash)) return true;
  if (known_missing_.count(hash)) return false;
  Answer a = git({"rev-parse", "--verify", "--quiet", hash + "^{commit}"});
  if (!a.ran) return std::nullopt;
  if (a.status == 1 || (a.status != 0 && a.err.find("ambiguous") != std::string::npos)) {
    // Not found, or a short id several objects share.
    if (a.err.find("ambiguous") != std::string::npos) last_error_ = first_line(a.err);
    return false;
  }
  if (a.status != 0) {
    last_error_ = "git rev-parse exited with status " + std::to_string(a.status) +
                  (a.err.empty() ? std::string() : ": " + first_line(a.err));
    return std::nullopt;
  }
  std::string full = first_line(a.out);
  if (!full.starts_with(text::to_lower(hash))) return false;  // a ref spelled in hex, not this id
  full_ids_[hash] = full;
  return true;
}

std::optional<std::vector<std::string>> GitCli::files_touched(const std::string& hash) {
  if (!is_commit_hash(hash)) return std::nullopt;
  auto it = full_ids_.find(hash);
  if (it == full_ids_.end()) {
    auto e = commit_exists(hash);
    if (!e) return std::nullopt;
    if (!*e) {
      last_error_ = "commit " + hash + " does not exist";
      return std::nullopt;
    }
    it = full_ids_.find(hash);
  }
  if (auto f = files_.find(it->second); f != files_.end()) return f->second;
  Answer a = git({"diff-tree", "-r", "--root", "-m", "--no-commit-id", "--name-only", "--no-renames", "--relative",
                  "-z", it->second},
                 16u << 20);
  if (!a.ran) return std::nullopt;
  if (a.status != 0) {
    last_error_ = "git diff-tree exited with status " + std::to_string(a.status) +
                  (a.err.empty() ? std::string() : ": " + first_line(a.err));
    return std::nullopt;
  }
  std::vector<std::string> files;
  size_t pos = 0;
  while (pos < a.out.size()) {
    size_t nul = a.out.find('\0', pos);
    std::string f = a.out.substr(pos, nul == std::string::npos ? std::string::npos : nul - pos);
    if (!f.empty()) files.push_back(std::move(f));
    if (nul == std::string::npos) break;
    pos = nul + 1;
  }
  return files;
}

void GitCli::want_range(const std::string& base, const std::string& tip) {
  want_range_ = {};
  if (base.size() == 40 && tip.size() == 40 && is_commit_hash(base) && is_commit_hash(tip))
    want_range_ = {text::to_lower(base), text::to_lower(tip)};
}

std::optional<std::vector<std::string>> GitCli::range_files(const std::string& base, const std::string& tip) const {
  auto it = ranges_.find({text::to_lower(base), text::to_lower(tip)});
  if (it == ranges_.end()) return std::nullopt;
  return it->second;
}

void GitCli::prefetch(const std::vector<std::string>& hashes) {
  auto range = std::exchange(want_range_, {});
  if (ranges_.count(range)) range = {};
  std::vector<std::string> asked;
  std::string input;
  for (const auto& h : hashes) {
    if (!is_commit_hash(h) || full_ids_.count(h) || known_missing_.count(h)) continue;
    asked.push_back(h);
    input += h + "^{commit}\n";
  }
  if (asked.empty()) return;
  // The range's two ends after the SUMMARY's hashes: each must be a commit of this id.
  if (!range.first.empty()) input += range.first + "^{commit}\n" + range.second + "^{commit}\n";
  Answer a = git({"cat-file", "--batch-check"}, 1 << 20, input);
  if (!a.ran || a.status != 0) return;  // asked again one by one
  auto ls = text::lines(a.out);
  if (ls.size() < asked.size() + (range.first.empty() ? 0 : 2)) return;
  std::vector<std::string> found;
  for (size_t i = 0; i < asked.size(); ++i) {
    std::string_view l = text::trim(ls[i]);
    const std::string& h = asked[i];
    size_t sp = l.find(' ');
    std::string_view id = l.substr(0, sp);
    std::string_view kind = sp == std::string_view::npos ? std::string_view{} : l.substr(sp + 1);
    if (kind.starts_with("commit") && id.size() >= h.size() && is_commit_hash(id) &&
        std::string(id).starts_with(text::to_lower(h))) {
      full_ids_[h] = std::string(id);
      found.emplace_back(id);
    } else if (kind == "missing" || kind.starts_with("commit")) {
      known_missing_[h] = true;  // missing, or a ref name spelled in hex
    }
    // "ambiguous" and anything unexpected: left to commit_exists.
  }
  if (!range.first.empty() && !(text::trim(ls[asked.size()]).starts_with(range.first + " commit ") &&
                                text::trim(ls[asked.size() + 1]).starts_with(range.second + " commit ")))
    range = {};
  if (found.empty() && range.first.empty()) return;
  std::string ids;
  for (const auto& f : found) ids += f + "\n";
  // The range last: a `TIP BASE` line sets TIP's parents in git's memory for the lines after it.
  if (!range.first.empty()) ids += range.second + " " + range.first + "\n";
  // --raw, not --name-only: a path is always the token after its ":..." record, so a file
  // named like a commit id is never taken for the next commit's header; --always: every line
  // gives its header, a diff with no paths too.
  Answer d = git({"diff-tree", "--stdin", "--always", "-r", "--root", "-m", "--raw", "--no-renames", "--relative", "-z"},
                 16u << 20, ids);
  if (!d.ran || d.status != 0) return;
  std::vector<std::pair<std::string, std::vector<std::string>>> blocks;  // header, its paths
  std::vector<std::string> toks;
  for (size_t pos = 0; pos < d.out.size();) {
    size_t nul = d.out.find('\0', pos);
    if (nul == std::string::npos) nul = d.out.size();
    toks.push_back(d.out.substr(pos, nul - pos));
    pos = nul + 1;
  }
  for (size_t k = 0; k < toks.size(); ++k) {
    const std::string& t = toks[k];
    if (t.empty()) continue;
    if (t[0] == ':') {
      if (blocks.empty() || k + 1 >= toks.size() || toks[k + 1].empty()) return;  // not the expected shape
      blocks.back().second.push_back(toks[++k]);
      continue;
    }
    if (t.size() != 40 || !is_commit_hash(t)) return;
    blocks.push_back({t, {}});
  }
  std::vector<std::string> range_paths;
  if (!range.first.empty()) {  // the last header is the range's, alone on the last line
    if (blocks.empty() || blocks.back().first != range.second) return;
    range_paths = std::move(blocks.back().second);
    blocks.pop_back();
  }
  std::set<std::string> expected(found.begin(), found.end());
  std::map<std::string, std::vector<std::string>> got;
  for (const auto& f : found) got[f];  // a commit touching nothing under the root lists nothing
  for (auto& [id, paths] : blocks) {
    if (!expected.count(id)) return;
    auto& v = got[id];
    for (auto& p : paths)
      if (std::find(v.begin(), v.end(), p) == v.end()) v.push_back(std::move(p));
  }
  for (auto& [id, files] : got) files_[id] = std::move(files);
  if (!range.first.empty()) ranges_[range] = std::move(range_paths);
}

const std::vector<std::string>& git_hook_env() {
  static const std::vector<std::string> names = {"GIT_DIR",
                                                 "GIT_WORK_TREE",
                                                 "GIT_INDEX_FILE",
                                                 "GIT_PREFIX",
                                                 "GIT_COMMON_DIR",
                                                 "GIT_OBJECT_DIRECTORY",
                                                 "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                                                 "GIT_IMPLICIT_WORK_TREE",
                                                 "GIT_SHALLOW_FILE",
                                                 "GIT_GRAFT_FILE"};
  return names;
}

SpawnSpec git_child_spec(const std::filesystem::path& dir, const std::vector<std::string>& args, long long timeout_ms,
                         const std::vector<std::pair<std::string, std::string>>& env) {
  // A child of the loop may delete a ref while another git of the run does too: each waits
  // for packed-refs.lock up to 10 s (git's default is 1 s) rather than fail on a busy machine.
  std::vector<std::string> a = {"-c", "core.packedRefsTimeout=10000"};
  a.insert(a.end(), args.begin(), args.end());
  SpawnSpec spec = git_spec(dir, a, timeout_ms, 4 << 20);
  spec.env.erase(
      std::remove_if(spec.env.begin(), spec.env.end(), [](const auto& kv) { return kv.first == "GIT_OPTIONAL_LOCKS"; }),
      spec.env.end());
  for (const auto& kv : env) spec.env.push_back(kv);
  return spec;
}

GitRun run_git(const std::filesystem::path& dir, const std::vector<std::string>& args, long long timeout_ms,
               const std::vector<std::pair<std::string, std::string>>& env, std::string stdin_data,
               bool keep_hooks_path) {
  SpawnSpec spec = git_spec(dir, args, timeout_ms, 4 << 20);
  if (keep_hooks_path)  // among the -c settings before args only
    for (size_t i = 0; i + 1 < spec.argv.size() - args.size(); ++i)
      if (spec.argv[i] == "-c" && spec.argv[i + 1].rfind("core.hooksPath=", 0) == 0) {
        spec.argv.erase(spec.argv.begin() + static_cast<std::ptrdiff_t>(i),
                        spec.argv.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        break;
      }
  spec.stdin_data = std::move(stdin_data);
  spec.env.erase(
      std::remove_if(spec.env.begin(), spec.env.end(), [](const auto& kv) { return kv.first == "GIT_OPTIONAL_LOCKS"; }),
      spec.env.end());
  for (const auto& kv : env) spec.env.push_back(kv);
  SpawnResult r = run_process(spec);
  GitRun g;
  if (r.outcome != SpawnResult::Outcome::Exited) {
    g.error = "git " + (args.empty() ? std::string() : args.front()) + " " + r.describe();
    return g;
  }
  g.ran = true;
  g.status = r.exit_code;
  g.truncated = r.out_truncated();
  g.out = std::move(r.out);
  g.err = std::move(r.err);
  if (g.status != 0) g.error = "git " + (args.empty() ? std::string() : args.front()) + ": " + first_line(g.err);
  return g;
}

std::optional<std::filesystem::path> git_toplevel(const std::filesystem::path& dir, long long timeout_ms) {
  SpawnResult r = run_process(git_spec(dir, {"rev-parse", "--show-toplevel"}, timeout_ms, 1 << 16));
  if (!r.ok()) return std::nullopt;
  std::string top = first_line(r.out);
  if (top.empty()) return std::nullopt;
  return std::filesystem::path(top);
}

}  // namespace yolo::runner
