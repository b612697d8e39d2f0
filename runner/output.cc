#include "runner/output.h"

#include <sys/ioctl.h>
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
std::string paint(const char* code, const std::string& s, bool color) {
  if (!color) return s;
  return std::string("\033[") + code + "m" + s + "\033[0m";
}
std::string paint(const char* code, const std::string& s) { return paint(code, s, color_enabled()); }
}  // namespace

std::string sym(Sym s, bool color) {
  switch (s) {
    case Sym::Ok:
      return paint("32", "✓", color);
    case Sym::Warn:
      return paint("33", "⚠", color);
    case Sym::Fail:
      return paint("31", "✗", color);
    case Sym::Diamond:
      return paint("36", "◆", color);
    case Sym::Pause:
      return paint("35", "⏸", color);
    case Sym::Skip:
      return paint("2", "○", color);
  }
  return "?";
}
std::string sym(Sym s) { return sym(s, color_enabled()); }

std::string bold(const std::string& s) { return paint("1", s); }
std::string dim(const std::string& s) { return paint("2", s); }
std::string dim(const std::string& s, bool color) { return paint("2", s, color); }

Sym sym_for(Verdict v) {
  switch (v) {
    case Verdict::Approve:
      return Sym::Ok;
    case Verdict::Conditional:
      return Sym::Warn;
    case Verdict::Reject:
      return Sym::Fail;
  }
  return Sym::Fail;
}

void json_line(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  s.push_back('\n');
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

namespace {
std::string& live_text() {
  static std::string s;
  return s;
}
void live_clear() {
  if (live_text().empty()) return;
  std::fputs("\r\033[K", stdout);
  std::fflush(stdout);
}
void live_draw() {
  if (live_text().empty()) return;
  std::fwrite(live_text().data(), 1, live_text().size(), stdout);
  std::fflush(stdout);
}
size_t columns() {
  struct winsize w {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 10) return w.ws_col;
  return 80;
}
}  // namespace

bool live_enabled() {
  static const bool on = [] {
    const char* term = std::getenv("TERM");
    return stdout_is_tty() && !(term && std::string(term) == "dumb");
  }();
  return on;
}

void set_live(const std::string& s) {
  if (!live_enabled()) return;
  live_clear();
  // Cut to the terminal's width: a wrapped line could not be redrawn in place.
  std::string t;
  size_t cols = columns() - 1, w = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\033') {  // an escape sequence takes no column
      size_t end = s.find('m', i);
      if (end == std::string::npos) break;
      t += s.substr(i, end - i + 1);
      i = end;
      continue;
    }
    if ((c & 0xC0) != 0x80 && ++w > cols) break;
    t += s[i];
  }
  if (!t.empty() && color_enabled()) t += "\033[0m";
  live_text() = t;
  live_draw();
}

void line(const std::string& s) {
  live_clear();
  std::string l = s + "\n";
  std::fwrite(l.data(), 1, l.size(), stdout);
  live_draw();
  std::fflush(stdout);
}

void err(const std::string& s) {
  live_clear();
  std::string l = s + "\n";
  std::fwrite(l.data(), 1, l.size(), stderr);
  std::fflush(stderr);
  live_draw();
}

}  // namespace yolo::out
