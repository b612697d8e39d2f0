// protocol/ is laid out one folder per subsystem, in the order CMakeLists.txt's
// YOLO_PROTOCOL_LAYERS gives, lowest first. These tests read the sources and hold the layout:
// every file sits in a listed folder, includes only its own folder and the folders before it,
// never runner/, and no two modules include each other, directly or round a longer loop.
// They also hold the one error convention (protocol/base/result.h, CONTRIBUTING.md "Errors"):
// no header reports a failure through a std::string out-parameter or a std::string that is
// empty on success.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

namespace stdfs = std::filesystem;

std::string read_all(const stdfs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> layers() {
  std::string cm = read_all(yolo::test::source_dir() / "CMakeLists.txt");
  std::smatch m;
  std::vector<std::string> out;
  if (!std::regex_search(cm, m, std::regex(R"(set\(YOLO_PROTOCOL_LAYERS ([a-z_ ]+)\))"))) return out;
  std::istringstream words(m[1].str());
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

struct Include {
  std::string from_file, from_layer, from_module, to_layer, to_module, line;
};

std::vector<Include> includes(std::vector<std::string>& stray) {
  std::vector<Include> out;
  const std::regex inc(R"re(^\s*#\s*include\s+"((protocol|runner)/[^"]*)")re");
  const std::regex proto(R"(protocol/([a-z_]+)/([a-z_0-9]+)\.h)");
  for (const auto& e : stdfs::recursive_directory_iterator(yolo::test::source_dir() / "protocol")) {
    if (!e.is_regular_file()) continue;
    auto rel = stdfs::relative(e.path(), yolo::test::source_dir() / "protocol");
    auto parts = std::vector<std::string>(rel.begin(), rel.end());
    if (parts.size() != 2) {
      stray.push_back("protocol/" + rel.string());
      continue;
    }
    std::string module = e.path().stem().string();
    std::istringstream text(read_all(e.path()));
    for (std::string line; std::getline(text, line);) {
      std::smatch m, p;
      if (!std::regex_search(line, m, inc)) continue;
      std::string target = m[1].str();
      Include i{"protocol/" + rel.string(), parts[0], module, "", "", line};
      if (std::regex_match(target, p, proto)) {
        i.to_layer = p[1].str();
        i.to_module = p[2].str();
      } else {
        i.to_layer = "?" + target;  // runner/, or protocol/ without a folder
      }
      out.push_back(i);
    }
  }
  return out;
}

TEST(ProtocolLayers, EveryFileSitsInAListedFolderAndIncludesOnlyItsOwnOrLowerOnes) {
  auto order = layers();
  ASSERT_GE(order.size(), 5u) << "YOLO_PROTOCOL_LAYERS not found in CMakeLists.txt";
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = i;

  std::vector<std::string> stray;
  auto incs = includes(stray);
  ASSERT_GT(incs.size(), 100u) << "the protocol sources were not found under " << yolo::test::source_dir();
  EXPECT_TRUE(stray.empty()) << "files outside a subsystem folder: " << stray.front();

  std::set<std::string> folders;
  for (const auto& e : stdfs::directory_iterator(yolo::test::source_dir() / "protocol"))
    if (e.is_directory()) folders.insert(e.path().filename().string());
  for (const auto& f : folders) EXPECT_TRUE(rank.count(f)) << "protocol/" << f << "/ is not in YOLO_PROTOCOL_LAYERS";

  for (const auto& i : incs) {
    ASSERT_TRUE(rank.count(i.from_layer)) << i.from_file;
    if (i.to_layer[0] == '?') {
      ADD_FAILURE() << i.from_file << " includes outside protocol's folders: " << i.line;
      continue;
    }
    ASSERT_TRUE(rank.count(i.to_layer)) << i.from_file << ": " << i.line;
    EXPECT_LE(rank[i.to_layer], rank[i.from_layer])
        << i.from_file << " (" << i.from_layer << ") includes a higher folder: " << i.line;
    EXPECT_TRUE(stdfs::exists(yolo::test::source_dir() / "protocol" / i.to_layer / (i.to_module + ".h")))
        << i.from_file << ": " << i.line;
  }
}

TEST(ProtocolLayers, NoTwoModulesIncludeEachOther) {
  std::vector<std::string> stray;
  std::map<std::string, std::set<std::string>> deps;  // module -> modules its .h and .cc include
  for (const auto& i : includes(stray))
    if (i.to_layer[0] != '?' && i.to_module != i.from_module) deps[i.from_module].insert(i.to_module);

  std::map<std::string, int> colour;  // 1 on the path, 2 done
  std::vector<std::string> path, loops;
  std::function<void(const std::string&)> visit = [&](const std::string& u) {
    colour[u] = 1;
    path.push_back(u);
    for (const auto& v : deps[u]) {
      if (colour[v] == 1) {
        std::string loop;
        for (auto it = std::find(path.begin(), path.end(), v); it != path.end(); ++it) loop += *it + " -> ";
        loops.push_back(loop + v);
      } else if (colour[v] == 0) {
        visit(v);
      }
    }
    path.pop_back();
    colour[u] = 2;
  };
  for (const auto& [m, _] : deps)
    if (colour[m] == 0) visit(m);
  EXPECT_TRUE(loops.empty()) << loops.size() << " include loops, the first: " << loops.front();
}

// Every header of protocol/, with its path from the source root.
std::vector<std::pair<std::string, std::string>> headers() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : stdfs::recursive_directory_iterator(yolo::test::source_dir() / "protocol"))
    if (e.is_regular_file() && e.path().extension() == ".h")
      out.emplace_back(stdfs::relative(e.path(), yolo::test::source_dir()).string(), read_all(e.path()));
  std::sort(out.begin(), out.end());
  return out;
}

// A failure told through a string the caller passes in to be filled: `std::string& err`,
// also as a parameter of a callback's signature.
const std::regex kErrOutParam(R"((^|[(,])\s*std::string\s*&\s*(err|error|errors|reason|why)\b)");
// A std::string return whose comment says it is the error, empty on success.
const std::regex kStringReturn(R"(^\s*(virtual\s+|static\s+)*std::string\s+([A-Za-z_0-9:]+)\()");
const std::regex kSaysEmptyIsSuccess(
    R"((why not|on success|error (message|sentence)|returns (an|the first) error|empty when (valid|written|all)|empty string when valid))",
    std::regex::icase);

std::vector<std::string> old_error_forms() {
  std::vector<std::string> found;
  for (const auto& [file, text] : headers()) {
    std::istringstream in(text);
    std::vector<std::string> comment;  // the comment lines right above this line
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, kErrOutParam)) found.push_back(file + ": " + m[2].str() + " out-parameter");
      if (std::regex_search(line, m, kStringReturn)) {
        for (const auto& c : comment)
          if (std::regex_search(c, kSaysEmptyIsSuccess)) {
            found.push_back(file + ": " + m[2].str() + " returns an error string");
            break;
          }
      }
      bool is_comment = line.find("//") != std::string::npos && line.find_first_not_of(" \t") == line.find("//");
      if (is_comment)
        comment.push_back(line);
      else
        comment.clear();
    }
  }
  return found;
}

TEST(ProtocolErrors, HeadersReportFailuresAsStatusOrResult) {
  for (const auto& f : old_error_forms())
    ADD_FAILURE() << f << ": report a failure as Status or Result<T> (protocol/base/result.h, CONTRIBUTING.md \"Errors\")";
}

TEST(ProtocolErrors, TheCheckSeesTheOldForms) {
  // The patterns on lines as the old headers had them, so the check above cannot pass by
  // matching nothing.
  EXPECT_TRUE(std::regex_search("json* resolve_target(json& doc, const std::string& id, std::string& err);", kErrOutParam));
  EXPECT_TRUE(std::regex_search("  const std::function<bool(json& doc, std::string& err)>& fn,", kErrOutParam));
  EXPECT_FALSE(std::regex_search("std::string label(const std::string& type);", kErrOutParam));
  EXPECT_FALSE(std::regex_search("  void fail_writes(const std::string& why);", kErrOutParam));
  EXPECT_TRUE(std::regex_search("std::string write_atomic(const stdfs::path& p, const std::string& c);", kStringReturn));
  EXPECT_TRUE(std::regex_search("// Returns an error message naming the file, or empty on success.", kSaysEmptyIsSuccess));
  EXPECT_TRUE(std::regex_search("  // must exist). \"\" or why not.", kSaysEmptyIsSuccess));
  EXPECT_FALSE(std::regex_search("// The label of a type name as stored (\"Approval\" for an unknown one).", kSaysEmptyIsSuccess));
  EXPECT_GT(headers().size(), 50u) << "the protocol headers were not found under " << yolo::test::source_dir();
}

}  // namespace
