// The objects an executor in a worktree writes go to a folder of its own, never to the
// repository's. git names an object by its content but does not check the name when it reads
// one, so a child that could write `.git/objects` could put other bytes under the name of a
// file main holds (or an alternates list, a commit graph) and every later checkout, slot and
// merge would take them. The executor's git is pointed at `<slot's git folder>/objects`
// (GIT_OBJECT_DIRECTORY), reading the repository's through GIT_ALTERNATE_OBJECT_DIRECTORIES;
// when it has ended, yolo packs what it wrote and `git index-pack --strict` takes the pack
// into the repository, hashing every object again.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace yolo::runner::slot_objects {

// The slot's git folder (`<common>/worktrees/<name>`), from its `.git` file ("gitdir: PATH"),
// made canonical; empty when the slot has none.
std::filesystem::path git_folder(const std::filesystem::path& slot);

// `<slot's git folder>/objects`, from the slot's `.git` file; empty when the slot has none.
std::filesystem::path folder(const std::filesystem::path& slot);

// The executor's environment for the slot: its object folder and the repository's to read.
std::vector<std::pair<std::string, std::string>> env(const std::filesystem::path& slot);

// An empty object folder before an executor starts (what an earlier attempt left is gone).
// false with `err` set when it cannot be made.
bool prepare(const std::filesystem::path& slot, std::string& err);

// Takes what the executor wrote into the repository of `root`, then empties the folder.
// Nothing written: nothing runs. false with `err` set (the plan fails: its commits cannot be
// trusted or read) when the objects cannot be packed or a packed object is broken.
bool take_in(const std::filesystem::path& root, const std::filesystem::path& slot, std::string& err);

}  // namespace yolo::runner::slot_objects
