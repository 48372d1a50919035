#pragma once
// The explicit tables the HBM controller's policies are chosen from (scheduler, page policy,
// refresh): a list of (name, factory) rows, looked up by the name a configuration key gives.

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scoville::hw {

template <class Factory>
using PolicyTable = std::vector<std::pair<std::string, Factory>>;

/// The factory of row `name`; throws std::invalid_argument naming `what` otherwise.
template <class Factory>
const Factory& policyFactory(const PolicyTable<Factory>& table, const std::string& name, const char* what) {
  for (const auto& [entry, factory] : table) {
    if (entry == name) return factory;
  }
  throw std::invalid_argument(std::string("unknown ") + what + " '" + name + "'");
}

/// The names of the table's rows, in order (for the configuration schema).
template <class Factory>
std::vector<std::string> policyNames(const PolicyTable<Factory>& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(entry.first);
  return names;
}

}  // namespace scoville::hw
