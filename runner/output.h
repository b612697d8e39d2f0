// Terminal output: the protocol's symbols, colour only on a TTY and without NO_COLOR,
// and one-line JSON for machines.
#pragma once
#include <string>

#include "protocol/findings/findings.h"
#include "protocol/base/json.h"

namespace yolo::out {

enum class Sym { Ok, Warn, Fail, Diamond, Pause, Skip };

bool stdout_is_tty();
bool color_enabled();  // stdout is a TTY and NO_COLOR is unset or empty
// The symbol (✓ ⚠ ✗ ◆ ⏸ ○), coloured when colour is enabled.
std::string sym(Sym s);
std::string bold(const std::string& s);
std::string dim(const std::string& s);
// The same for an output of its own (a file, a pipe), coloured when `color` says so.
std::string sym(Sym s, bool color);
std::string dim(const std::string& s, bool color);
Sym sym_for(Verdict v);

// One JSON document on one line of stdout, flushed.
void json_line(const json& j);
// A line for people on stdout, flushed.
void line(const std::string& s);
// A line on stderr.
void err(const std::string& s);

// A live status line at the bottom of a terminal (what is running, for how long).
// Only when stdout is a TTY and TERM is not "dumb"; line() and err() clear it first and draw
// it again after, so it never mixes with the lines above it. set_live("") removes it.
bool live_enabled();
void set_live(const std::string& s);

}  // namespace yolo::out
