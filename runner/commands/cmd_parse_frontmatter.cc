// yolo parse-frontmatter FILE: the frontmatter of a Markdown file as JSON.
#include "protocol/plan/frontmatter.h"
#include "protocol/ports/fs.h"
#include "runner/command.h"
#include "runner/output.h"

namespace yolo::runner {
namespace {

int run(const World& w, const std::string& file) {
  auto read = w.files().read(file, fs::kDefaultMaxFileBytes, /*text=*/true);
  if (!read.ok()) {
    if (read.error->kind == fs::FileError::Kind::NotFound) {  // the exact contract other tools parse
      out::json_line({{"error", read.error->message}});
      return kExitFail;
    }
    out::json_line({{"ok", false}, {"cmd", "parse-frontmatter"}, {"error", read.error->message}});
    return kExitFail;
  }
  Frontmatter fm = parse_frontmatter(read.content);
  if (fm.error) {
    std::string where = file;
    if (fm.error->line) where += ":" + std::to_string(fm.error->line);
    if (fm.error->column) where += ":" + std::to_string(fm.error->column);
    json j = {{"ok", false}, {"cmd", "parse-frontmatter"}, {"error", where + ": " + fm.error->message}};
    if (fm.error->line) j["line"] = fm.error->line;
    if (fm.error->column) j["column"] = fm.error->column;
    out::json_line(j);
    return kExitFail;
  }
  out::json_line(
      {{"ok", true}, {"cmd", "parse-frontmatter"}, {"frontmatter", fm.data}, {"has_frontmatter", fm.has_frontmatter}});
  return kExitOk;
}

const CommandRegistrar reg{
    Command{"parse-frontmatter", "Print a Markdown file's YAML frontmatter as JSON", [](CLI::App& sub) {
              auto file = std::make_shared<std::string>();
              sub.add_option("FILE", *file, "Markdown file")->required();
              auto as_json = std::make_shared<bool>(false);
              sub.add_flag("--json", *as_json, "Accepted for uniformity: the output is always JSON");
              return [file, as_json](const Context& ctx) { return run(ctx.world, *file); };
            }}};

}  // namespace
}  // namespace yolo::runner
