#pragma once
// A tree of named statistics with units and descriptions. Hot paths bump plain counters; rates
// and ratios are formulas evaluated only when the report is written.

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scoville::stats {

/// A monotonically increasing count or sum. Cheap to bump from a hot path.
class Counter {
 public:
  void add(double amount = 1.0) { m_value += amount; }
  double value() const { return m_value; }

 private:
  double m_value = 0.0;
};

/// A named group of statistics, owned by the module it describes. Children are not owned.
class Group {
 public:
  Group(std::string name, std::string description);
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  /// Registers a counter; the reference stays valid for the group's lifetime.
  Counter& counter(std::string name, std::string unit, std::string description);
  /// Registers a value derived at report time from other stats.
  void formula(std::string name, std::string unit, std::string description, std::function<double()> compute);
  /// Adds a child group (e.g. a chip's tensor core under the chip).
  void addChild(const Group& child);

  const std::string& name() const { return m_name; }
  /// {"description": ..., "stats": {name: {"value", "unit", "description"}}, "groups": {...}}
  nlohmann::ordered_json toJson() const;
  /// Value of a stat by name in this group; throws std::out_of_range if absent.
  double value(const std::string& name) const;
  /// Appends every counter of this group and of its children to `out`, in report order, leaving
  /// out child groups named in `skipGroups` and counters named in `skipCounters`. For a serving
  /// run's sampled decode steps (runtime/StepSampler.h), which add what a recorded step counted
  /// as the modules would have: the counters stay their modules', read and bumped as on a hot path.
  void collectCounters(std::vector<Counter*>& out, const std::vector<std::string>& skipGroups,
                       const std::vector<std::string>& skipCounters) const;

 private:
  struct Entry {
    std::string name;
    std::string unit;
    std::string description;
    const Counter* counter = nullptr;
    std::function<double()> formula;
  };
  std::string m_name;
  std::string m_description;
  std::deque<Counter> m_counters;
  std::vector<Entry> m_entries;
  std::vector<const Group*> m_children;
};

}  // namespace scoville::stats
