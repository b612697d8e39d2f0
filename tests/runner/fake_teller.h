// The Teller (runner/run_teller.h) of a part of the run stepped alone in a unit test: it
// records what the part says, for the test to read.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "runner/run_teller.h"

namespace yolo::test {

class FakeTeller : public runner::phase::Teller {
 public:
  struct Event {
    std::string name;
    json data;
    out::Sym sym;
    std::string human;
  };
  struct Log {
    std::string type, plan;
    json data;
  };
  std::vector<Event> events;
  std::vector<std::string> notes;  // each note's line, dim or not
  std::vector<Log> logs;

  void emit(const std::string& event, json data, out::Sym sym, const std::string& human) override {
    events.push_back({event, std::move(data), sym, human});
  }
  void note(const std::string& human, bool /*dim*/ = false) override { notes.push_back(human); }
  void log(const std::string& type, const std::string& plan, json data = json::object()) override {
    logs.push_back({type, plan, std::move(data)});
  }

  // The events' names, in order.
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& e : events) v.push_back(e.name);
    return v;
  }
  bool has(const std::string& event) const {
    return std::any_of(events.begin(), events.end(), [&](const Event& e) { return e.name == event; });
  }
  // An event of that name whose data has key = value.
  bool has(const std::string& event, const std::string& key, const json& value) const {
    return std::any_of(events.begin(), events.end(), [&](const Event& e) {
      return e.name == event && e.data.is_object() && e.data.value(key, json()) == value;
    });
  }
  // The data of the first event of that name (nullptr: none).
  const json* first(const std::string& event) const {
    for (const auto& e : events)
      if (e.name == event) return &e.data;
    return nullptr;
  }
  // The data of the last event of that name (null: none).
  json last(const std::string& event) const {
    for (size_t i = events.size(); i-- > 0;)
      if (events[i].name == event) return events[i].data;
    return nullptr;
  }
  // The log lines' types, in order.
  std::vector<std::string> log_types() const {
    std::vector<std::string> v;
    for (const auto& l : logs) v.push_back(l.type);
    return v;
  }
  bool noted(const std::string& line) const { return std::find(notes.begin(), notes.end(), line) != notes.end(); }
  void clear() {
    events.clear();
    notes.clear();
    logs.clear();
  }
};

}  // namespace yolo::test
