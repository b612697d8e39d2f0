#include "runner/output.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace yolo::out {

bool stdout_is_tty() { return ::isatty(STDOUT_FILENO) == 1; }

bool color_enabled() {
  // no-color.org: NO_COLOR set to a non-empty value turns colour off; empty counts as unset.
  static const bool on = [] {
    const char* nc = std::getenv("NO_COLOR");
    return stdout_is_tty() && (nc == nullptr || *nc == '\0');
  }();
  return on;
}

namespace {
std::string paint(const char* code, const std::string& s) {
  if (!color_enabled()) return s;
  return std::string("\033[") + code + "m" + s + "\033[0m";
}
}  // namespace

std::string sym(Sym s) {
  switch (s) {
    case Sym::Ok: return paint("32", "✓");
    case Sym::Warn: return paint("33", "⚠");
    case Sym::Fail: return paint("31", "✗");
    case Sym::Diamond: return paint("36", "◆");
    case Sym::Pause: return paint("35", "⏸");
    case Sym::Skip: return paint("2", "○");
  }
  return "?";
}

std::string bold(const std::string& s) { return paint("1", s); }
std::string dim(const std::string& s) { return paint("2", s); }

Sym sym_for(Verdict v) {
  switch (v) {
    case Verdict::Approve: return Sym::Ok;
    case Verdict::Conditional: return Sym::Warn;
    case Verdict::Reject: return Sym::Fail;
  }
  return Sym::Fail;
}

void json_line(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  s.push_back('\n');
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

void line(const std::string& s) {
  std::string l = s + "\n";
  std::fwrite(l.data(), 1, l.size(), stdout);
  std::fflush(stdout);
}

void err(const std::string& s) {
  std::string l = s + "\n";
  std::fwrite(l.data(), 1, l.size(), stderr);
  std::fflush(stderr);
}

}  // namespace yolo::out
