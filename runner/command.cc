#include "runner/command.h"

#include <fcntl.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string_view>

#include "protocol/base/text.h"
#include "runner/cli_docs.h"
#include "runner/subprocess.h"
#include "runner/person.h"
#include "runner/world.h"

namespace yolo::runner {
namespace {
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}
}  // namespace

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("yolo") : p.string();
}

void register_command(Command c) { registry().push_back(std::move(c)); }

namespace {
bool describes_other_commands(const std::string& name) {
  return name == "help" || name == "completion" || name == "man";
}
}  // namespace

const std::vector<Command>& commands() {
  auto& r = registry();
  std::sort(r.begin(), r.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return r;
}

namespace {
// After a parse error: for each word like an option that the command does not have, the
// nearest option it has (`--dryrun`: `--dry-run`), as a mistyped command gets the nearest command.
void suggest_option(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = nullptr;
  if (argc >= 2) try {
      cmd = app.get_subcommand(std::string(argv[1]));
    } catch (const CLI::Error&) {
    }
  std::vector<std::string> names;
  for (CLI::App* level : {&app, cmd}) {
    if (!level) continue;
    for (const CLI::Option* o : level->get_options()) {
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
      for (const auto& sn : o->get_snames()) names.push_back("-" + sn);
    }
  }
  for (int i = 2; i < argc; ++i) {
    std::string w = argv[i];
    if (w == "--") break;
    if (w.size() < 2 || w[0] != '-' || (w[1] >= '0' && w[1] <= '9')) continue;
    std::string flag = w.substr(0, w.find('='));
    if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
    std::string near = text::nearest(flag, names);
    if (!near.empty())
      std::cerr << "yolo: no option '" << text::sanitize_for_terminal(flag) << "'"
                << (cmd ? " for " + cmd->get_name() : "") << ". Did you mean '" << near << "'?\n";
  }
}
}  // namespace

int run_cli(int argc, char** argv) {
  // Started with stdin, stdout or stderr closed (`yolo ... <&-`): the next file we open would
  // take that number, and a write meant for the terminal would land in it (libuv also asserts
  // on closing a descriptor below 3). Each closed one is /dev/null from here on.
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd) return kExitFail;
  // A child that closes its stdin early must not kill us with SIGPIPE: writes fail with EPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  // A write past a file-size limit fails with EFBIG instead of killing us (the event log
  // then removes its partial line: protocol/state/events.cc).
  ::signal(SIGXFSZ, SIG_IGN);
  // Children that escape their process group are re-parented to us and ended with their
  // spawn; a keeper ends them if we are killed (runner/subprocess.h).
  supervise_children();
  // The files, the clock, the approval key file and the signature check, fixed now: the one
  // World of this process, handed to the command in its context.
  const World& w = world();
  // Every process yolo starts (agents, executors, approvers, hooks' children) carries the
  // marker that `yolo approve` refuses (runner/person.h).
  mark_children_as_started_by_yolo();
  // `yolo --version` alone: nothing to parse (CLI11 would throw CLI::Success to say it).
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::cout << "yolo " YOLO_VERSION "\n";
    return kExitOk;
  }
  CLI::App app{"yolo: runs the .yolo-planning protocol (review gate, approvals, waves)", "yolo"};
  app.set_version_flag("--version", std::string("yolo ") + YOLO_VERSION);
  app.require_subcommand(1);
  // Start-up: `yolo COMMAND ...` declares the options of COMMAND only; building
  // every command's options was most of the start-up's own work. The commands that describe
  // the others (help, completion, man), a bare `yolo`, top-level flags and unknown names get
  // the whole tree.
  const Command* only = nullptr;
  if (argc >= 2)
    for (const auto& c : commands())
      if (c.name == argv[1] && !describes_other_commands(c.name)) only = &c;
  std::vector<std::pair<CLI::App*, std::function<int(const Context&)>>> runs;
  for (const auto& c : commands()) {
    if (only && &c != only) continue;
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    sub->group(is_plumbing_command(c.name) ? "Plumbing (for scripts, hooks and agents)" : "Commands");
    runs.emplace_back(sub, c.setup(*sub));
  }
  // Bare `yolo`: what it can do. A mistyped command: say so, and the nearest one.
  if (argc < 2) {
    std::cout << commands_overview(describe_commands(app));
    return kExitOk;
  }
  if (std::string first = argv[1]; !first.empty() && first[0] != '-') {
    bool known = std::any_of(commands().begin(), commands().end(), [&](const Command& c) { return c.name == first; });
    if (!known) {
      std::string near = suggest_command(first, describe_commands(app));
      std::cerr << "yolo: unknown command '" << text::sanitize_for_terminal(first) << "'"
                << (near.empty() ? std::string(".") : ". Did you mean '" + near + "'?") << "\n";
      std::cerr << "Next: `yolo help` lists the commands\n";
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    suggest_option(app, argc, argv);
    return kExitUsage;
  }
  for (auto& [sub, fn] : runs)
    if (sub->parsed()) {
      std::error_code ec;
      std::filesystem::path here = std::filesystem::current_path(ec);
      Context ctx(w, ec ? std::filesystem::path() : w.files().project_root(here).value_or(""));
      return fn(ctx);
    }
  return kExitUsage;
}

}  // namespace yolo::runner
