#include "protocol/review/reviewer_output.h"

#include <gtest/gtest.h>

namespace yolo::review {
namespace {

TEST(ReviewerOutput, ReadsTheStructuredBlock) {
  auto r = parse_reviewer_output(
      "VERDICT: reject\n"
      "FINDINGS:\n"
      "- [id:f-001] [severity:high] [file:src/a.cc] issue: Missing error path | suggestion: Handle ENOENT\n"
      "- [id:f-002] [severity:medium] [status:persistent] [file:b.md] issue: Vague criteria | suggestion: Make them testable\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.verdict, Verdict::Reject);
  EXPECT_EQ(r.verdict_line, 1);
  EXPECT_TRUE(r.findings_block);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_TRUE(r.unparsed.empty());
  const auto& a = r.findings[0];
  EXPECT_EQ(a.id, "f-001");
  EXPECT_EQ(a.severity, Severity::High);
  EXPECT_EQ(a.file, "src/a.cc");
  EXPECT_EQ(a.title, "Missing error path");
  EXPECT_EQ(a.description, "Missing error path");
  EXPECT_EQ(a.suggestion, "Handle ENOENT");
  EXPECT_EQ(a.status, "");
  EXPECT_EQ(r.findings[1].status, "persistent");
  EXPECT_EQ(r.findings[1].severity, Severity::Medium);
}

TEST(ReviewerOutput, FindingJsonShape) {
  auto f = parse_finding_line("- [id:f-9] [severity:low] [file:x] [status:new] issue: a. b | suggestion: c");
  ASSERT_TRUE(f.ok()) << f.error;
  json j = f->to_json();
  EXPECT_EQ(j, json::parse(R"({"id":"f-9","severity":"low","file":"x","title":"a.","description":"a. b",
                              "suggestion":"c","status":"new"})"));
  f->status.clear();
  EXPECT_FALSE(f->to_json().contains("status"));
  auto back = ReviewerFinding::from_json(j);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to_json(), j);
  EXPECT_FALSE(ReviewerFinding::from_json(json::parse(R"({"id":"x","severity":"huge"})")));
}

TEST(ReviewerOutput, ToleratesProseFencesCrlfAndIndentation) {
  auto r = parse_reviewer_output(
      "I looked at the plan carefully.\r\n"
      "\r\n"
      "```text\r\n"
      "   VERDICT: conditional\r\n"
      "   FINDINGS:\r\n"
      "   - [id:f-1] [severity:medium] issue: Something | suggestion: Else\r\n"
      "\r\n"
      "   * [id:f-2] [severity:LOW] issue: Minor\r\n"
      "```\r\n"
      "That is all.\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.verdict, Verdict::Conditional);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].suggestion, "Else");  // no stray '\r'
  EXPECT_EQ(r.findings[1].severity, Severity::Low);
  EXPECT_EQ(r.findings[1].suggestion, "");
  EXPECT_TRUE(r.unparsed.empty());
}

TEST(ReviewerOutput, MarkdownEmphasisAndHeadingsAroundTheVerdict) {
  EXPECT_EQ(*parse_reviewer_output("**VERDICT:** approve\n").verdict, Verdict::Approve);
  EXPECT_EQ(*parse_reviewer_output("## VERDICT: `reject`\n").verdict, Verdict::Reject);
  // A quoted line is text the reviewer quotes (a plan it echoes), never its verdict.
  EXPECT_FALSE(parse_reviewer_output("> VERDICT: Conditional\n").verdict);
  EXPECT_EQ(*parse_reviewer_output("> VERDICT: approve\nVERDICT: Conditional\n").verdict, Verdict::Conditional);
}

// Two different well-formed verdicts: fail closed (reject), and say why.
TEST(ReviewerOutput, ConflictingWellFormedVerdictsReject) {
  auto r = parse_reviewer_output(
      "Format: VERDICT: approve|reject|conditional\n"  // prose, not a VERDICT line
      "VERDICT: approve|reject|conditional\n"          // the template echoed: not well-formed
      "VERDICT: reject\n"
      "VERDICT: approve\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.verdict, Verdict::Reject);
  EXPECT_EQ(r.verdict_line, 3);
  EXPECT_EQ(r.rejected_verdicts.size(), 1u);
  EXPECT_NE(r.conflict.find("line 3: reject, line 4: approve"), std::string::npos) << r.conflict;
}

TEST(ReviewerOutput, UnknownWordIsNoVerdict) {
  for (const char* text : {"VERDICT: maybe\n", "VERDICT: approve because it is fine\n", "VERDICT:\n", "VERDICT: approved\n",
                           "verdict: approve\n", "The verdict: approve\n", "VERDICT approve\n"}) {
    auto r = parse_reviewer_output(text);
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_FALSE(r.why_no_verdict().empty());
  }
  auto r = parse_reviewer_output("VERDICT: maybe\n");
  EXPECT_NE(r.why_no_verdict().find("maybe"), std::string::npos);
  EXPECT_NE(parse_reviewer_output("nothing here").why_no_verdict().find("no VERDICT"), std::string::npos);
  EXPECT_FALSE(parse_reviewer_output("").ok());
}

TEST(ReviewerOutput, CycleAndDeltaCounts) {
  auto r = parse_reviewer_output("VERDICT: reject\nCYCLE: 2/3\nRESOLVED: 1\nPERSISTENT: 2\nNEW: 0\nFINDINGS:\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.cycle, 2);
  EXPECT_EQ(r.cycle_max, 3);
  EXPECT_EQ(r.resolved, 1);
  EXPECT_EQ(r.persistent, 2);
  EXPECT_EQ(r.new_count, 0);
  auto one_line = parse_reviewer_output("VERDICT: approve\nCYCLE: 3/3  RESOLVED: 4, PERSISTENT: 0, NEW: 1\n");
  EXPECT_EQ(one_line.cycle, 3);
  EXPECT_EQ(one_line.resolved, 4);
  EXPECT_EQ(one_line.persistent, 0);
  EXPECT_EQ(one_line.new_count, 1);
  auto bad = parse_reviewer_output("VERDICT: approve\nCYCLE: two\n");
  EXPECT_FALSE(bad.cycle);
}

TEST(ReviewerOutput, UnparseableFindingLinesAreReported) {
  auto r = parse_reviewer_output(
      "VERDICT: reject\n"
      "FINDINGS:\n"
      "- [id:f-1] [severity:high] issue: fine one\n"
      "- [id:f-2] issue: no severity at all\n"
      "- [id:f-3] [severity:urgent] issue: unknown severity\n"
      "- [id:f-4] [severity:medium]\n"
      "- just a sentence in the list\n"
      "- none\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.findings.size(), 1u);
  ASSERT_EQ(r.unparsed.size(), 4u);
  EXPECT_EQ(r.unparsed[0].line, 4);
  EXPECT_NE(r.unparsed[0].reason.find("severity"), std::string::npos);
  EXPECT_NE(r.unparsed[1].reason.find("urgent"), std::string::npos);
  EXPECT_EQ(r.unparsed[2].reason, "no issue text");
  EXPECT_EQ(r.unparsed[3].text, "just a sentence in the list");
}

TEST(ReviewerOutput, ProseEndsTheBlockAndCheckboxesOutsideAreIgnored) {
  auto r = parse_reviewer_output(
      "- [ ] a checklist item in prose\n"
      "VERDICT: conditional\n"
      "FINDINGS:\n"
      "- [id:f-1] [severity:low] issue: one\n"
      "Some closing remarks.\n"
      "- a list in the remarks\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(r.unparsed.empty());
}

TEST(ReviewerOutput, TaggedFindingOutsideTheBlockStillCounts) {
  auto r = parse_reviewer_output("- [id:f-7] [severity:medium] issue: early finding\nVERDICT: conditional\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "f-7");
}

TEST(ReviewerOutput, ContinuationLinesJoinTheirFinding) {
  auto r = parse_reviewer_output(
      "VERDICT: reject\nFINDINGS:\n- [id:f-1] [severity:high] issue: long text\n  that wraps | suggestion: do\n    this\n");
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].description, "long text that wraps");
  EXPECT_EQ(r.findings[0].suggestion, "do this");
}

TEST(ReviewerOutput, MissingIdGetsAStableSyntheticOne) {
  auto a = parse_finding_line("[severity:high] issue: same text");
  auto b = parse_finding_line("- [severity:high] same text");
  ASSERT_TRUE(a.ok()) << a.error;
  ASSERT_TRUE(b.ok()) << b.error;
  EXPECT_EQ(a->id.substr(0, 2), "f-");
  EXPECT_EQ(a->id, b->id);
  auto c = parse_finding_line("[severity:high] issue: other text");
  EXPECT_NE(a->id, c->id);
}

TEST(ReviewerOutput, BareSeverityTagAndPipesInsideTheIssue) {
  auto f = parse_finding_line("- [id:x] [high] issue: a | b is ambiguous");
  ASSERT_TRUE(f.ok()) << f.error;
  EXPECT_EQ(f->severity, Severity::High);
  EXPECT_EQ(f->description, "a | b is ambiguous");
  EXPECT_EQ(f->suggestion, "");
}

TEST(ReviewerOutput, AFindingLineThatCannotBeReadSaysWhatItLacks) {
  auto no_severity = parse_finding_line("- [id:x] issue: a");
  ASSERT_FALSE(no_severity.ok());
  EXPECT_EQ(no_severity.error, "no [severity:high|medium|low] tag");
  auto bad_severity = parse_finding_line("- [severity:huge] issue: a");
  ASSERT_FALSE(bad_severity.ok());
  EXPECT_EQ(bad_severity.error, "unknown severity 'huge'");
  auto no_text = parse_finding_line("- [severity:low] issue:");
  ASSERT_FALSE(no_text.ok());
  EXPECT_EQ(no_text.error, "no issue text");
}

TEST(ReviewerOutput, FindingsNoneOnTheHeaderLine) {
  auto r = parse_reviewer_output("VERDICT: approve\nFINDINGS: none\n");
  EXPECT_TRUE(r.findings_block);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_TRUE(r.unparsed.empty());
}

TEST(ReviewerOutput, LongTitleIsCutOnACharacterBoundary) {
  std::string desc;
  for (int i = 0; i < 100; ++i) desc += "é";  // 2 bytes each, no sentence end
  auto f = parse_finding_line("[severity:low] issue: " + desc);
  ASSERT_TRUE(f.ok()) << f.error;
  EXPECT_LE(f->title.size(), 124u);
  EXPECT_EQ(f->description, desc);
  json j = f->to_json();
  EXPECT_NO_THROW((void)j.dump());
}

TEST(ReviewerOutput, HostileAndHugeInputNeverCrashes) {
  std::string big;
  for (int i = 0; i < 50000; ++i) big += "- [id:f-" + std::to_string(i) + "] [severity:low] issue: x\n";
  auto r = parse_reviewer_output("VERDICT: approve\nFINDINGS:\n" + big);
  EXPECT_EQ(r.findings.size(), 50000u);
  std::string junk = "VERDICT: reject\n[[[[[:::]]]]\n- [\n- [id:\n- [severity:\n\xff\xfe\x00\x01 VERDICT:\n";
  junk.push_back('\0');
  auto j = parse_reviewer_output(junk);
  EXPECT_EQ(*j.verdict, Verdict::Reject);
  auto only_bracket = parse_reviewer_output(std::string(100000, '['));
  EXPECT_FALSE(only_bracket.ok());
}

TEST(ReviewerOutput, Stage1FindingsTakeTheReviewerShape) {
  Finding f;
  f.severity = Severity::Medium;
  f.check = "task_count";
  f.issue = "7 tasks (max 5). Split it.";
  f.suggested_fix = "Split the plan";
  auto r = from_stage1(f);
  EXPECT_EQ(r.id.rfind("s1-task_count-", 0), 0u);
  EXPECT_EQ(r.severity, Severity::Medium);
  EXPECT_EQ(r.title, "7 tasks (max 5).");
  EXPECT_EQ(r.description, f.issue);
  EXPECT_EQ(r.suggestion, "Split the plan");
  EXPECT_EQ(from_stage1(f).id, r.id);
}

}  // namespace
}  // namespace yolo::review
