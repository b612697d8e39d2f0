// yolo help [COMMAND], yolo completion bash|zsh|fish, yolo man: what yolo can do, from the
// same registry the parser is built from (runner/cli_docs.h). `yolo help covers`: what an
// approval covers, from the list the gates use (protocol/gates/gate_coverage.h); docs/trust.md
// holds the same text, and a test keeps them equal.
#include <iostream>

#include "protocol/gates/gate_coverage.h"
#include "runner/cli_docs.h"
#include "runner/command.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

const CommandRegistrar help_cmd{
    {"help", "Show the commands, or one command's options (yolo help COMMAND)",
     [](CLI::App& sub) -> std::function<int(const Context&)> {
       auto name = std::make_shared<std::vector<std::string>>();
       sub.add_option("COMMAND", *name,
                      "A command (and a subcommand: yolo help hooks install), or `covers`: what an approval covers");
       CLI::App* app = &sub;
       return [name, app](const Context&) {
         CLI::App* root = app->get_parent();
         auto cmds = describe_commands(*root);
         if (name->empty()) {
           std::cout << commands_overview(cmds);
           return kExitOk;
         }
         if (*name == std::vector<std::string>{"covers"}) {
           std::cout << "What an approval covers (a change of any of it re-opens the gate):\n\n"
                     << gates::coverage_markdown();
           return kExitOk;
         }
         CLI::App* target = root;
         for (const auto& n : *name) {
           CLI::App* next = nullptr;
           try {
             next = target->get_subcommand(n);
           } catch (const CLI::OptionNotFound&) {
           }
           if (!next) {
             std::string near = suggest_command(n, target == root ? cmds : describe_commands(*target));
             out::err("yolo: unknown command '" + n + "'" + (near.empty() ? "" : ". Did you mean '" + near + "'?"));
             out::err("Next: `yolo help` lists the commands");
             return kExitUsage;
           }
           target = next;
         }
         // "Usage: yolo hooks install", as `yolo hooks install --help` says it: CLI11 names
         // only the command itself unless told the names above it.
         std::string above;
         for (CLI::App* a = target->get_parent(); a; a = a->get_parent())
           above = a->get_name() + (above.empty() ? "" : " " + above);
         std::cout << (target == root ? target->help() : target->help(above));
         return kExitOk;
       };
     }}};

const CommandRegistrar completion_cmd{
    {"completion", "Print a shell completion script: yolo completion bash|zsh|fish",
     [](CLI::App& sub) -> std::function<int(const Context&)> {
       auto shell = std::make_shared<std::string>();
       sub.add_option("SHELL", *shell, "bash, zsh or fish")->required();
       CLI::App* app = &sub;
       return [shell, app](const Context&) {
         std::string s = completion_script(*shell, describe_commands(*app->get_parent()));
         if (s.empty()) {
           out::err("yolo completion: unknown shell '" + *shell + "' (bash, zsh or fish)");
           return kExitUsage;
         }
         std::cout << s;
         return kExitOk;
       };
     }}};

const CommandRegistrar man_cmd{{"man", "Print the man page (roff); `cmake --install` installs it as yolo.1",
                                [](CLI::App& sub) -> std::function<int(const Context&)> {
                                  CLI::App* app = &sub;
                                  return [app](const Context&) {
                                    std::cout << man_page(describe_commands(*app->get_parent()), YOLO_VERSION);
                                    return kExitOk;
                                  };
                                }}};

}  // namespace
}  // namespace yolo::runner
