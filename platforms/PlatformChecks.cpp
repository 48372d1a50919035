#include "platforms/PlatformChecks.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace scoville::platform::detail {

using namespace scoville::config;

int chipTypeIndex(const PlatformConfig& c, const std::string& name) {
  for (std::size_t i = 0; i < c.chipTypes.size(); ++i) {
    if (c.chipTypes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

/// Fails at `at` with a message that starts with the key it is about.
[[noreturn]] void reject(const Node& at, ErrorKind kind, const std::string& message) {
  at.fail(kind, fmt::format("'{}': {}", at.path(), message));
}

std::string bytesText(double bytes) {
  return formatQuantity(bytes, dim::kBytes);
}

void checkSwitched(const PlatformConfig& c, const Node& node) {
  const Node net = node.at("network");
  if (!c.network.fabricSwitch) {
    reject(net, ErrorKind::kMissingKey, "topology switched needs 'platform.network.switch' (the switch type)");
  }
  const hw::SwitchConfig& sw = *c.network.fabricSwitch;
  const int planes = c.network.planes;
  for (const ChipGroup& group : c.chips) {
    const hw::ChipConfig& type = c.chipTypes[static_cast<std::size_t>(chipTypeIndex(c, group.type))];
    if (type.fabricPorts.count < planes) {
      reject(net.at("planes"), ErrorKind::kInvalidConfig,
             fmt::format("chip type '{}' has {} fabric ports, fewer than the {} switch planes it must "
                         "reach (platform.network.planes)",
                         type.name, type.fabricPorts.count, planes));
    }
    if (sw.inputBufferBytes < type.fabricPorts.link.mtuBytes + type.fabricPorts.link.headerBytes) {
      reject(net.at("switch"), ErrorKind::kInvalidConfig,
             fmt::format("switch input_buffer {} cannot hold one packet of chip type '{}' (mtu {} + "
                         "header {})",
                         bytesText(sw.inputBufferBytes), type.name, bytesText(type.fabricPorts.link.mtuBytes),
                         bytesText(type.fabricPorts.link.headerBytes)));
    }
  }
  for (int plane = 0; plane < planes; ++plane) {
    int used = 0;
    std::vector<std::string> parts;
    for (const ChipGroup& group : c.chips) {
      const hw::ChipConfig& type = c.chipTypes[static_cast<std::size_t>(chipTypeIndex(c, group.type))];
      const int perChip = type.fabricPorts.portsInPlane(planes, plane);
      used += perChip * group.count;
      parts.push_back(fmt::format("{} x {} ({} ports each)", group.count, type.name, perChip));
    }
    if (used > sw.ports) {
      reject(
          net.at("switch").at("ports"), ErrorKind::kInvalidConfig,
          fmt::format("switch ports over-subscribed: plane {} switch has {} ports but the chips attach {} links ({})",
                      plane, sw.ports, used, fmt::join(parts, " + ")));
    }
  }
}

void checkDirect(const PlatformConfig& c, const Node& node) {
  const Node net = node.at("network");
  const int chips = c.chipCount();
  int needed = 0;
  std::string why;
  switch (c.network.topology) {
    case Topology::kAllToAll:
      needed = chips - 1;
      why = fmt::format("all_to_all among {} chips needs a port to each of the other {} chips", chips, chips - 1);
      break;
    case Topology::kRing:
      // Two neighbours; with two chips both bundles go to the same one.
      needed = 2;
      why = fmt::format("a ring of {} chips needs 2 neighbour ports", chips);
      break;
    case Topology::kTorus: {
      const long long product =
          std::accumulate(c.network.torus.begin(), c.network.torus.end(), 1LL, [](long long a, int d) {
            return std::min(a * d,
                            1LL << 40);  // each dimension <= 4096: no overflow, saturates far above any chip count
          });
      if (c.network.torus.empty() || product != chips) {
        reject(net.at("torus"), ErrorKind::kInvalidConfig,
               fmt::format("torus dimensions [{}] hold {} chips but the platform has {}",
                           fmt::join(c.network.torus, ", "), product, chips));
      }
      // Two neighbour bundles per dimension (+1 and -1; in a dimension of 2 both reach the same chip).
      for (const int d : c.network.torus) needed += d >= 2 ? 2 : 0;
      why = fmt::format("a [{}] torus needs {} neighbour ports", fmt::join(c.network.torus, ", "), needed);
      break;
    }
    default: return;
  }
  if (chips < 2) {
    reject(net.at("topology"), ErrorKind::kInvalidConfig,
           fmt::format("topology {} needs at least 2 chips, the platform has {}", topologyName(c.network.topology),
                       chips));
  }
  for (const ChipGroup& group : c.chips) {
    const hw::ChipConfig& type = c.chipTypes[static_cast<std::size_t>(chipTypeIndex(c, group.type))];
    if (type.fabricPorts.count < needed) {
      reject(net.at("topology"), ErrorKind::kInvalidConfig,
             fmt::format("fabric ports over-subscribed: {}, but chip type '{}' has {} "
                         "(fabric_ports.count)",
                         why, type.name, type.fabricPorts.count));
    }
  }
}

void checkLeafSpine(const PlatformConfig& c, const Node& node) {
  const Node net = node.at("network");
  if (!c.network.fabricSwitch || !c.network.leafSpine) {
    reject(net, ErrorKind::kMissingKey,
           "topology leaf_spine needs 'platform.network.switch' (leaf and spine type) and "
           "'platform.network.leaf_spine'");
  }
  if (c.network.fabricSwitch->flowControl != hw::FlowControl::kOutputQueued) {
    reject(net.at("switch"), ErrorKind::kInvalidConfig,
           "leaf_spine switches are modelled output-queued (no credit loop): set flow_control: output_queued");
  }
  const LeafSpineConfig& ls = *c.network.leafSpine;
  const int chips = c.chipCount();
  const int leaves = (chips + ls.chipsPerLeaf - 1) / ls.chipsPerLeaf;
  int maxPorts = 0;  // the builder gives every chip the same bundle to its leaf: size the leaf for the largest
  for (int i = 0; i < chips; ++i) maxPorts = std::max(maxPorts, c.chipConfig(i).fabricPorts.count);
  const int leafPorts = std::min(chips, ls.chipsPerLeaf) * maxPorts + ls.spines * ls.uplinksPerSpine;
  if (leafPorts > c.network.fabricSwitch->ports) {
    reject(
        net.at("leaf_spine"), ErrorKind::kInvalidConfig,
        fmt::format("leaf switch ports over-subscribed: {} chips x {} ports + {} spines x {} uplinks = {} > {} ports",
                    std::min(chips, ls.chipsPerLeaf), maxPorts, ls.spines, ls.uplinksPerSpine, leafPorts,
                    c.network.fabricSwitch->ports));
  }
  if (leaves * ls.uplinksPerSpine > c.network.fabricSwitch->ports) {
    reject(net.at("leaf_spine"), ErrorKind::kInvalidConfig,
           fmt::format("spine switch ports over-subscribed: {} leaves x {} uplinks = {} > {} ports", leaves,
                       ls.uplinksPerSpine, leaves * ls.uplinksPerSpine, c.network.fabricSwitch->ports));
  }
  if (leaves > 1 && (ls.spines == 0 || ls.uplinksPerSpine == 0)) {
    reject(net.at("leaf_spine"), ErrorKind::kInvalidConfig,
           fmt::format("{} chips need {} leaves, and leaves reach each other only through spines: "
                       "spines and uplinks_per_spine must be > 0",
                       chips, leaves));
  }
}

void checkCustom(const PlatformConfig& c, const Node& node) {
  const Node net = node.at("network");
  if (c.network.links.empty()) {
    reject(net, ErrorKind::kMissingKey, "topology custom needs 'platform.network.links'");
  }
  const int chips = c.chipCount();
  // Endpoints: chips 0..n-1, then switches.
  std::map<std::string, int> ids;
  for (int i = 0; i < chips; ++i) ids[PlatformConfig::chipName(i)] = i;
  for (std::size_t s = 0; s < c.network.switches.size(); ++s) {
    const std::string& name = c.network.switches[s].name;
    if (!ids.emplace(name, chips + static_cast<int>(s)).second) {
      reject(net.at("switches").at(s).at("name"), ErrorKind::kInvalidConfig,
             fmt::format("switch name '{}' is already used by a chip or another switch", name));
    }
  }
  std::vector<std::string> known;
  for (const auto& [name, id] : ids) known.push_back(name);
  const int nodes = chips + static_cast<int>(c.network.switches.size());
  std::vector<int> portsUsed(static_cast<std::size_t>(nodes), 0);
  std::vector<std::vector<int>> adjacent(static_cast<std::size_t>(nodes));
  bool switchLinks = false;
  for (std::size_t l = 0; l < c.network.links.size(); ++l) {
    const CustomLink& link = c.network.links[l];
    int end[2] = {0, 0};
    const std::string* names[2] = {&link.a, &link.b};
    for (int e = 0; e < 2; ++e) {
      const auto it = ids.find(*names[e]);
      if (it == ids.end()) {
        const std::string near = nearestMatch(*names[e], known);
        reject(net.at("links").at(l).at(e == 0 ? "a" : "b"), ErrorKind::kInvalidConfig,
               fmt::format("dangling link: '{}' is neither a chip (chip0..chip{}) nor a switch of network.switches{}",
                           *names[e], chips - 1, near.empty() ? "" : "; did you mean '" + near + "'?"));
      }
      end[e] = it->second;
    }
    if (end[0] == end[1]) {
      reject(net.at("links").at(l), ErrorKind::kInvalidConfig,
             fmt::format("link {} connects '{}' to itself", l, link.a));
    }
    for (std::size_t k = 0; k < l; ++k) {
      const CustomLink& other = c.network.links[k];
      if ((other.a == link.a && other.b == link.b) || (other.a == link.b && other.b == link.a)) {
        reject(net.at("links").at(l), ErrorKind::kInvalidConfig,
               fmt::format("links[{}] joins '{}' and '{}' again (links[{}]); give one entry with ports: N", l, link.a,
                           link.b, k));
      }
    }
    if (end[0] >= chips && end[1] >= chips) switchLinks = true;
    for (const int e : end) portsUsed[static_cast<std::size_t>(e)] += link.ports;
    adjacent[static_cast<std::size_t>(end[0])].push_back(end[1]);
    adjacent[static_cast<std::size_t>(end[1])].push_back(end[0]);
  }
  if (switchLinks && !c.network.switchLink) {
    reject(net, ErrorKind::kMissingKey,
           "links between two switches need 'platform.network.switch_link' (their link parameters)");
  }
  for (int n = 0; n < nodes; ++n) {
    const bool isChip = n < chips;
    const int budget =
        isChip ? c.chipConfig(n).fabricPorts.count : c.network.switches[static_cast<std::size_t>(n - chips)].ports;
    const std::string name =
        isChip ? PlatformConfig::chipName(n) : c.network.switches[static_cast<std::size_t>(n - chips)].name;
    if (portsUsed[static_cast<std::size_t>(n)] > budget) {
      reject(net.at("links"), ErrorKind::kInvalidConfig,
             fmt::format("ports over-subscribed: links use {} ports of {} '{}', which has {}",
                         portsUsed[static_cast<std::size_t>(n)], isChip ? "chip" : "switch", name, budget));
    }
    if (!isChip && portsUsed[static_cast<std::size_t>(n)] == 0) {
      reject(net.at("switches").at(static_cast<std::size_t>(n - chips)), ErrorKind::kInvalidConfig,
             fmt::format("dangling switch: no link attaches to switch '{}'", name));
    }
  }
  // Every chip must reach every other chip.
  std::vector<bool> reached(static_cast<std::size_t>(nodes), false);
  std::vector<int> frontier = {0};
  reached[0] = true;
  while (!frontier.empty()) {
    const int n = frontier.back();
    frontier.pop_back();
    for (const int m : adjacent[static_cast<std::size_t>(n)]) {
      if (!reached[static_cast<std::size_t>(m)]) {
        reached[static_cast<std::size_t>(m)] = true;
        frontier.push_back(m);
      }
    }
  }
  for (int n = 1; n < chips; ++n) {
    if (!reached[static_cast<std::size_t>(n)]) {
      reject(net.at("links"), ErrorKind::kInvalidConfig,
             fmt::format("the links leave {} unreachable from chip0", PlatformConfig::chipName(n)));
    }
  }
  for (int n = chips; n < nodes; ++n) {
    if (!reached[static_cast<std::size_t>(n)]) {
      reject(net.at("switches").at(static_cast<std::size_t>(n - chips)), ErrorKind::kInvalidConfig,
             fmt::format("switch '{}' is cut off from the chips (no path from chip0)",
                         c.network.switches[static_cast<std::size_t>(n - chips)].name));
    }
  }
}

/// Keys of one topology given with another are mistakes: reject them rather than ignore them.
void checkUnusedKeys(const PlatformConfig& c, const Node& net) {
  const Topology t = c.network.topology;
  const auto unused = [&](const char* key, const char* readBy) {
    reject(net.at(key), ErrorKind::kInvalidConfig,
           fmt::format("only read with topology {}, not {}", readBy, topologyName(t)));
  };
  if (t != Topology::kSwitched && c.network.planes != 1) unused("planes", "switched");
  if (t != Topology::kSwitched && t != Topology::kLeafSpine && c.network.fabricSwitch) {
    unused("switch", "switched or leaf_spine");
  }
  if (t != Topology::kTorus && !c.network.torus.empty()) unused("torus", "torus");
  if (t != Topology::kLeafSpine && c.network.leafSpine) unused("leaf_spine", "leaf_spine");
  if (t != Topology::kCustom && !c.network.switches.empty()) unused("switches", "custom");
  if (t != Topology::kCustom && !c.network.links.empty()) unused("links", "custom");
  if (t != Topology::kCustom && c.network.switchLink) unused("switch_link", "custom");
  if (t != Topology::kRing && t != Topology::kTorus && t != Topology::kCustom && c.network.chipForwardLatencyS > 0) {
    unused("chip_forward_latency", "ring, torus or custom");
  }
}

}  // namespace

void checkPlatformChipTypes(const PlatformConfig& c, const Node& node) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < c.chipTypes.size(); ++i) {
    if (!seen.insert(c.chipTypes[i].name).second) {
      reject(node.at("chip_types").at(i).at("name"), ErrorKind::kInvalidConfig,
             fmt::format("chip type '{}' is defined twice in chip_types", c.chipTypes[i].name));
    }
  }
  std::vector<std::string> names(seen.begin(), seen.end());
  for (std::size_t i = 0; i < c.chips.size(); ++i) {
    if (chipTypeIndex(c, c.chips[i].type) < 0) {
      const std::string near = nearestMatch(c.chips[i].type, names);
      reject(node.at("chips").at(i).at("type"), ErrorKind::kInvalidConfig,
             fmt::format("'{}' names no chip type in chip_types (defined: {}){}", c.chips[i].type,
                         fmt::join(names, ", "), near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
  }
}

void checkPlatformNetwork(const PlatformConfig& c, const Node& node) {
  const int chips = c.chipCount();
  const Node net = node.at("network");
  checkUnusedKeys(c, net);
  switch (c.network.topology) {
    case Topology::kNone:
      if (chips != 1) {
        reject(net.at("topology"), ErrorKind::kInvalidConfig,
               fmt::format("topology none holds exactly one chip, the platform has {}; choose "
                           "switched, all_to_all, ring, torus, leaf_spine or custom",
                           chips));
      }
      break;
    case Topology::kSwitched: checkSwitched(c, node); break;
    case Topology::kAllToAll:
    case Topology::kRing:
    case Topology::kTorus: checkDirect(c, node); break;
    case Topology::kLeafSpine: checkLeafSpine(c, node); break;
    case Topology::kCustom: checkCustom(c, node); break;
  }
}

void checkPlatformPlacement(const PlatformConfig& c, const Node& node) {
  const PlacementConfig& p = c.placement;
  const Node at = node.at("placement");
  const int chips = c.chipCount();
  const long long product = static_cast<long long>(p.tp) * p.pp * p.dp;  // each <= 65536: fits 64 bits
  const int servingChips = p.disaggregation ? static_cast<int>(p.disaggregation->decodeChips.size()) : chips;
  if (product != servingChips) {
    reject(at, ErrorKind::kInvalidConfig,
           fmt::format("inconsistent parallelism: tp {} x pp {} x dp {} = {} chips, but the platform {} {} chips", p.tp,
                       p.pp, p.dp, product, p.disaggregation ? "decodes on" : "has", servingChips));
  }
  if ((static_cast<long long>(p.tp) * p.dp) % p.ep != 0) {
    reject(at.at("ep"), ErrorKind::kInvalidConfig,
           fmt::format("inconsistent parallelism: ep {} must divide the tp x dp = {} chips of a pipeline "
                       "stage that expert groups are drawn from",
                       p.ep, p.tp * p.dp));
  }
  if (p.experts == "explicit") {
    if (p.expertMap.empty()) {
      reject(at.at("experts"), ErrorKind::kMissingKey, "experts: {impl: explicit} needs 'placement.expert_map'");
    }
    for (std::size_t e = 0; e < p.expertMap.size(); ++e) {
      if (p.expertMap[e] >= p.ep) {
        reject(at.at("expert_map").at(e), ErrorKind::kOutOfRange,
               fmt::format("expert {} is mapped to EP rank {}, but ep = {} (ranks 0..{})", e, p.expertMap[e], p.ep,
                           p.ep - 1));
      }
    }
  } else if (!p.expertMap.empty()) {
    reject(at.at("expert_map"), ErrorKind::kInvalidConfig,
           fmt::format("expert_map is only read with experts: {{impl: explicit}}, not {}", p.experts));
  }
  if (p.disaggregation) {
    const Node d = at.at("disaggregation");
    std::set<int> used;
    for (const auto& [key, list] :
         {std::pair<const char*, const std::vector<int>*>{"prefill_chips", &p.disaggregation->prefillChips},
          {"decode_chips", &p.disaggregation->decodeChips}}) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        const int chip = (*list)[i];
        if (chip >= chips) {
          reject(d.at(key).at(i), ErrorKind::kOutOfRange,
                 fmt::format("chip {} does not exist: the platform has chips 0..{}", chip, chips - 1));
        }
        if (!used.insert(chip).second) {
          reject(d.at(key).at(i), ErrorKind::kInvalidConfig,
                 fmt::format("chip {} is listed twice: prefill and decode chips must be disjoint", chip));
        }
      }
    }
    for (int chip = 0; chip < chips; ++chip) {
      if (used.count(chip) == 0) {
        reject(d, ErrorKind::kInvalidConfig,
               fmt::format("chip {} is in neither prefill_chips nor decode_chips: every chip serves a phase", chip));
      }
    }
    const long long group = static_cast<long long>(p.tp) * p.pp;
    if (static_cast<int>(p.disaggregation->prefillChips.size()) % group != 0) {
      reject(d.at("prefill_chips"), ErrorKind::kInvalidConfig,
             fmt::format("{} prefill chips are not a whole number of tp x pp = {} replicas",
                         p.disaggregation->prefillChips.size(), group));
    }
  }
}

void checkPlatformHost(const PlatformConfig& c, const Node& node) {
  if (c.placement.kvCache.preemption == hw::KvPreemption::kSwap && !(c.host.memoryBytes > 0)) {
    reject(node.at("placement").at("kv_cache").at("preemption"), ErrorKind::kInvalidConfig,
           "swap moves preempted requests' KV blocks to host memory, but 'platform.host.memory' is 0 B: give the "
           "host memory, or use preemption recompute");
  }
}

}  // namespace scoville::platform::detail
