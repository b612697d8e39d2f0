#include "runner/config_report.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>

#include "protocol/base/text.h"
#include "runner/output.h"

namespace yolo::runner {

void report_config_warnings(const ConfigLoad& c) {
  static std::mutex mu;
  static std::set<std::string> told;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& w : c.config.warnings) {
    if (!told.insert(w).second) continue;
    out::err(out::sym(out::Sym::Warn) + " .yolo-planning/config.json: " + text::sanitize_for_terminal(w));
  }
}

std::string dispatch_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* d = std::getenv("YOLO_DISPATCH_DIR"); d && *d) return d;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "/usr/local/libexec/yolo/dispatch";
  fs::path bin = exe.parent_path();
  fs::path installed = (bin / ".." / "libexec" / "yolo" / "dispatch").lexically_normal();
  if (fs::is_regular_file(installed / "lib.sh", ec)) return installed.string();
  fs::path source = (bin / ".." / "contrib" / "dispatch").lexically_normal();
  if (fs::is_regular_file(source / "lib.sh", ec)) return source.string();
  return installed.string();  // named in the error when the adapter is not there
}

ConfigLoad load_config_reported(const World& w, const std::filesystem::path& root) {
  ConfigLoad c = load_config(w, root);
  report_config_warnings(c);
  // The templates name the adapters wherever yolo's installation put them.
  DispatchSpec& d = c.config.dispatch;
  for (CommandSpec* cs : {&d.submit, &d.wait, &d.cancel, &d.submit_wave, &d.wait_wave})
    for (auto& a : cs->argv)
      for (size_t at; (at = a.find("{dispatch_dir}")) != std::string::npos;) a.replace(at, 14, dispatch_dir());
  return c;
}

bool program_exists(const std::string& argv0, const std::filesystem::path& root) {
  if (argv0.empty()) return false;
  auto executable = [](const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (argv0.find('/') != std::string::npos) {
    std::filesystem::path p(argv0);
    return executable(p.is_absolute() ? p : root / p);
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string d = dirs.substr(start, end - start);
    if (executable(std::filesystem::path(d.empty() ? "." : d) / argv0)) return true;
    start = end + 1;
  }
  return false;
}

std::vector<MissingAgent> missing_agent_programs(const Config& c, const std::filesystem::path& root) {
  std::vector<MissingAgent> out;
  auto check = [&](const char* role, const CommandSpec& s) {
    if (s.argv.empty()) return;
    if (!program_exists(s.argv.front(), root)) out.push_back({role, s.argv.front()});
  };
  check("reviewer", c.reviewer);
  check("architect", c.architect);
  check("executor", c.executor);
  check("dispatch.submit", c.dispatch.submit);  // the adapter runs here (the executor, in the job)
  check("dispatch.wait", c.dispatch.wait);
  check("dispatch.cancel", c.dispatch.cancel);
  check("dispatch.submit_wave", c.dispatch.submit_wave);
  check("dispatch.wait_wave", c.dispatch.wait_wave);
  return out;
}

}  // namespace yolo::runner
