// A log of "start TIME" and "end TIME" lines, appended in time order by stand-in programs that
// mark when a slow step begins and ends: how many of the steps ran at once at most, and how
// many began.
#pragma once
#include <algorithm>
#include <sstream>
#include <string>

namespace yolo::test {

struct Overlap {
  int starts = 0;
  int most = 0;
};

inline Overlap overlap_of(const std::string& log) {
  Overlap o;
  int open = 0;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("start ", 0) == 0) ++open, ++o.starts;
    if (l.rfind("end ", 0) == 0) --open;
    o.most = std::max(o.most, open);
  }
  return o;
}

}  // namespace yolo::test
