#include "protocol/watch/watch_paths.h"

#include <gtest/gtest.h>

namespace yolo::watch {
namespace {

const std::filesystem::path kPlanning = "/repo/.yolo-planning";

PathKind kind(const std::string& rel) { return classify(kPlanning, kPlanning / rel); }

TEST(WatchPaths, WhatEachPathMeans) {
  EXPECT_EQ(kind("phases/01-core/01-01-PLAN.md"), PathKind::Plan);
  EXPECT_EQ(kind("phases/01-core/01-01-SUMMARY.md"), PathKind::Summary);
  EXPECT_EQ(kind("phases/01-core"), PathKind::PhaseDir);
  EXPECT_EQ(kind("phases"), PathKind::PhasesRoot);
  EXPECT_EQ(kind("ROADMAP.md"), PathKind::Roadmap);
  EXPECT_EQ(kind(".execution-state.json"), PathKind::State);
  EXPECT_EQ(kind("config.json"), PathKind::Config);
  EXPECT_EQ(kind(".reviews/01-core.json"), PathKind::Ledger);
  EXPECT_EQ(kind(".reviews/01-core.jsonl"), PathKind::Ledger);  // its journal
  EXPECT_EQ(kind("phases/01-core/notes.md"), PathKind::Other);
  EXPECT_EQ(kind("phases/01-core/sub/01-01-PLAN.md"), PathKind::Other);
  EXPECT_EQ(classify(kPlanning, "/elsewhere/01-01-PLAN.md"), PathKind::Other);
}

TEST(WatchPaths, TheRunnersOwnFilesAndEditorsNoiseAreIgnored) {
  for (const char* p :
       {".events/event-log.jsonl", ".cache/overview.json", ".lock", ".watch.lock", ".execute-executors.jsonl",
        ".reviews/.01-core.json.tmp.42.1", ".reviews/01-core.json.corrupt-2026-11-23T21-40-00Z", ".reviews/.json",
        ".reviews/x/y.json", ".execution-state.json.corrupt-2026-11-23T21-40-00Z", ".execution-state.json.tmp.42.1",
        "phases/01-core/.01-01-PLAN.md.swp", "phases/01-core/4913", "phases/01-core/01-01-PLAN.md~",
        "phases/01-core/.#01-01-PLAN.md", "phases/01-core/01-01-PLAN.md___jb_tmp___", "phases/01-core/sedAb12Cd"})
    EXPECT_EQ(kind(p), PathKind::Ignored) << p;
}

}  // namespace
}  // namespace yolo::watch
