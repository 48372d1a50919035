#include "hw/GridSchedule.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace scoville::hw {

namespace {

/// One unit under processor sharing: its resident blocks' finish levels of attained service (a
/// block that arrives when the unit has given each resident `level` iterations, with w to do,
/// finishes at level + w; the level rises at 1 / max(residents, slots) per unit of time: a block
/// alone issues at 1 / slots of the unit).
struct Unit {
  std::priority_queue<double, std::vector<double>, std::greater<>> finish;
  double level = 0.0;
  double time = 0.0;  // when `level` was last brought up to date
};

}  // namespace

double gridMakespan(const tlm::WorkGrid& grid, int units) {
  if (units < 1 || grid.runs.empty()) return 0.0;
  const auto slots = static_cast<std::size_t>(std::max(1, grid.slotsPerUnit));
  std::vector<Unit> unit(static_cast<std::size_t>(units));
  // Blocks in launch order, as (run, index within it).
  std::size_t run = 0;
  uint32_t inRun = 0;
  const auto next = [&](double& work) {
    while (run < grid.runs.size() && inRun >= grid.runs[run].count) {
      ++run;
      inRun = 0;
    }
    if (run >= grid.runs.size()) return false;
    work = grid.runs[run].iterations;
    ++inRun;
    return true;
  };
  // Events: (time the unit's next block finishes, unit); stale entries are skipped.
  using Event = std::pair<double, std::size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  const auto advance = [&](Unit& u, double now) {
    if (!u.finish.empty()) u.level += (now - u.time) / static_cast<double>(std::max(u.finish.size(), slots));
    u.time = now;
  };
  const auto schedule = [&](std::size_t i) {
    const Unit& u = unit[i];
    if (u.finish.empty()) return;
    events.emplace(u.time + (u.finish.top() - u.level) * static_cast<double>(std::max(u.finish.size(), slots)), i);
  };
  // The first wave: slot 0 of every unit in order, then slot 1, ...
  double work = 0.0;
  for (std::size_t s = 0; s < slots; ++s) {
    for (std::size_t i = 0; i < unit.size() && next(work); ++i) unit[i].finish.push(unit[i].level + work);
  }
  for (std::size_t i = 0; i < unit.size(); ++i) schedule(i);
  double makespan = 0.0;
  while (!events.empty()) {
    const auto [at, i] = events.top();
    events.pop();
    Unit& u = unit[i];
    if (u.finish.empty()) continue;
    const double due = u.time + (u.finish.top() - u.level) * static_cast<double>(std::max(u.finish.size(), slots));
    if (due != at) continue;  // stale: the unit's residents changed since
    advance(u, at);
    // Every block due at this level finishes now; each freed slot takes the next block.
    while (!u.finish.empty() && u.finish.top() <= u.level * (1.0 + 1e-12) + 1e-12) {
      u.finish.pop();
      makespan = std::max(makespan, at);
      if (next(work)) u.finish.push(u.level + work);
    }
    schedule(i);
  }
  return makespan;
}

double gridStretch(const tlm::WorkGrid& grid, int units) {
  if (units < 1) return 1.0;
  if (grid.cachedUnits == units) return grid.cachedStretch;
  const double even = static_cast<double>(grid.iterations()) / static_cast<double>(units);
  const double stretch = even > 0.0 ? std::max(1.0, gridMakespan(grid, units) / even) : 1.0;
  grid.cachedUnits = units;
  grid.cachedStretch = stretch;
  return stretch;
}

}  // namespace scoville::hw
