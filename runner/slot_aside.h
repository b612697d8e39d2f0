// A plan's checks judge what would be merged, not what its executor left in its slot.
//
// A check such as `make test`, `npm test` or `sh verify.sh` reads files of the slot besides its
// program: a Makefile the executor changed and did not commit, or an untracked conftest.py,
// would make the check pass while the branch that is merged fails it. So, before the checks of
// a plan in a worktree, what the slot holds beyond its HEAD (changes to tracked files, untracked
// files that are not ignored, and every untracked `.gitignore`, which would hide the files it
// names from the step) and every untracked folder that holds a repository of its own (git
// would record it as a link, not remove it) is put aside, judged against an index made anew from HEAD (the
// executor could write the slot's own to hide a change): recorded as a tree in the repository, then removed from
// the slot. After the checks it is put back, so the gate lists it and the person finds it.
// Ignored files (build outputs, node_modules) stay where they are: checks may need them, and
// the committed ignore rules, not the executor, decide what they are.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace yolo::runner::slot_aside {

struct Aside {
  std::string tree;                        // the slot's files beyond HEAD; empty: nothing put aside
  std::vector<std::string> ignore_files;   // untracked .gitignore files, moved to `held`
  std::vector<std::string> nested;         // untracked folders holding a repository of their own, moved too
  std::filesystem::path held;              // where they wait (in the slot's git folder)
  std::filesystem::path index_copy;        // the slot's index as the executor left it
  bool active() const { return !tree.empty() || !ignore_files.empty() || !nested.empty() || !index_copy.empty(); }
};

// Puts aside what the slot holds beyond HEAD, but the paths of `keep` (the plan's SUMMARY, its
// plan file). false with `err` set when it could not be done; the slot may then be half
// cleaned, and `aside` says what to put back.
bool put_aside(const std::filesystem::path& slot, const std::vector<std::string>& keep, Aside& aside,
               std::string& err);

// Puts back what put_aside took (its files, the index as it was). false with `err` set.
bool put_back(const std::filesystem::path& slot, const Aside& aside, std::string& err);

}  // namespace yolo::runner::slot_aside
