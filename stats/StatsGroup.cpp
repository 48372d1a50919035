#include "stats/StatsGroup.h"

#include <algorithm>
#include <stdexcept>

namespace scoville::stats {

Group::Group(std::string name, std::string description)
    : m_name(std::move(name)), m_description(std::move(description)) {}

Counter& Group::counter(std::string name, std::string unit, std::string description) {
  Counter& c = m_counters.emplace_back();
  m_entries.push_back(Entry{std::move(name), std::move(unit), std::move(description), &c, {}});
  return c;
}

void Group::formula(std::string name, std::string unit, std::string description, std::function<double()> compute) {
  m_entries.push_back(Entry{std::move(name), std::move(unit), std::move(description), nullptr, std::move(compute)});
}

void Group::addChild(const Group& child) {
  m_children.push_back(&child);
}

double Group::value(const std::string& name) const {
  for (const Entry& e : m_entries) {
    if (e.name == name) return e.counter ? e.counter->value() : e.formula();
  }
  throw std::out_of_range("no stat '" + name + "' in group '" + m_name + "'");
}

void Group::collectCounters(std::vector<Counter*>& out, const std::vector<std::string>& skipGroups,
                            const std::vector<std::string>& skipCounters) const {
  const auto named = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const Entry& e : m_entries) {
    // A counter is the module's accumulator, which it bumps from const paths too: the tree only
    // holds it by pointer to const for the report.
    if (e.counter != nullptr && !named(skipCounters, e.name)) out.push_back(const_cast<Counter*>(e.counter));
  }
  for (const Group* child : m_children) {
    if (!named(skipGroups, child->name())) child->collectCounters(out, skipGroups, skipCounters);
  }
}

nlohmann::ordered_json Group::toJson() const {
  nlohmann::ordered_json stats = nlohmann::ordered_json::object();
  for (const Entry& e : m_entries) {
    stats[e.name] = {
        {"value", e.counter ? e.counter->value() : e.formula()}, {"unit", e.unit}, {"description", e.description}};
  }
  nlohmann::ordered_json out = {{"description", m_description}, {"stats", stats}};
  if (!m_children.empty()) {
    nlohmann::ordered_json groups = nlohmann::ordered_json::object();
    for (const Group* child : m_children) groups[child->name()] = child->toJson();
    out["groups"] = groups;
  }
  return out;
}

}  // namespace scoville::stats
