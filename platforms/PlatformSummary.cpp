#include "platforms/PlatformSummary.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "platforms/Platform.h"
#include "tlm/Precision.h"
#include "config/Units.h"

namespace scoville::platform {

using config::formatQuantity;
namespace dim = config::dim;

namespace {

std::string q(double value, config::Dimension d) {
  return formatQuantity(value, d);
}

/// Chips of each chip type, in chip_types order.
std::vector<int> countsPerType(const PlatformConfig& config) {
  std::vector<int> counts(config.chipTypes.size(), 0);
  for (const ChipGroup& group : config.chips) {
    for (std::size_t t = 0; t < config.chipTypes.size(); ++t) {
      if (config.chipTypes[t].name == group.type) counts[t] += group.count;
    }
  }
  return counts;
}

/// A link bundle of the topology for display: endpoints and bandwidth per direction.
struct DisplayEdge {
  std::string a;
  std::string b;
  double bandwidth;
  int ports;
};

std::string nodeName(const PlatformConfig& config, int node) {
  if (node < config.chipCount()) return PlatformConfig::chipName(node);
  const int s = node - config.chipCount();
  if (config.network.topology == Topology::kCustom) return config.network.switches[static_cast<std::size_t>(s)].name;
  if (config.network.topology == Topology::kLeafSpine) {
    const LeafSpineConfig& ls = *config.network.leafSpine;
    const int leaves = (config.chipCount() + ls.chipsPerLeaf - 1) / ls.chipsPerLeaf;
    return s < leaves ? "leaf" + std::to_string(s) : "spine" + std::to_string(s - leaves);
  }
  return "switch" + std::to_string(s);
}

std::vector<DisplayEdge> displayEdges(const PlatformConfig& config) {
  std::vector<DisplayEdge> edges;
  const FabricConfig& net = config.network;
  if (net.topology == Topology::kNone) return edges;
  if (net.topology == Topology::kSwitched) {
    for (int p = 0; p < net.planes; ++p) {
      for (int i = 0; i < config.chipCount(); ++i) {
        const hw::FabricPortsConfig& ports = config.chipConfig(i).fabricPorts;
        const int inPlane = ports.portsInPlane(net.planes, p);
        edges.push_back(DisplayEdge{PlatformConfig::chipName(i), "plane" + std::to_string(p),
                                    inPlane * ports.link.bandwidthBytesPerS, inPlane});
      }
    }
    return edges;
  }
  const hw::FabricGraph graph = buildFabricGraph(config);
  for (const hw::FabricGraph::Edge& e : graph.edges) {
    edges.push_back(DisplayEdge{nodeName(config, e.a), nodeName(config, e.b), e.link.bandwidthBytesPerS, 0});
  }
  return edges;
}

}  // namespace

double bisectionBandwidth(const PlatformConfig& config) {
  const int chips = config.chipCount();
  if (chips < 2 || config.network.topology == Topology::kNone) return 0.0;
  if (config.network.topology == Topology::kSwitched) {
    std::vector<double> injection;
    for (int i = 0; i < chips; ++i) injection.push_back(config.chipConfig(i).fabricPorts.bandwidthBytesPerS());
    std::sort(injection.begin(), injection.end());
    double half = 0.0;
    for (int i = 0; i < chips / 2; ++i) half += injection[static_cast<std::size_t>(i)];
    return half;
  }
  return hw::bisectionBandwidth(buildFabricGraph(config));
}

nlohmann::ordered_json summarize(const PlatformConfig& config) {
  const std::vector<int> counts = countsPerType(config);
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  std::map<std::string, double> peak;
  double hbmBandwidth = 0, hbmCapacity = 0, sram = 0, injection = 0, power = 0;
  for (std::size_t t = 0; t < config.chipTypes.size(); ++t) {
    const hw::ChipConfig& chip = config.chipTypes[t];
    const double n = counts[t];
    nlohmann::ordered_json chipPeak = nlohmann::ordered_json::object();
    for (const auto& [name, precision] : tlm::precisionNames()) {
      if (chip.tensorCore.macsPerCell.of(precision) > 0) {
        chipPeak[name] = chip.tensorCore.peakFlops(precision);
        peak[name] += n * chip.tensorCore.peakFlops(precision);
      }
    }
    hbmBandwidth += n * chip.hbm.bandwidthBytesPerS;
    hbmCapacity += n * chip.hbm.capacityBytes;
    sram += n * chip.sram.capacityBytes;
    injection += n * chip.fabricPorts.bandwidthBytesPerS();
    power += n * chip.ratedPowerW;
    types.push_back({{"name", chip.name},
                     {"count", counts[t]},
                     {"rated_power_w", chip.ratedPowerW},
                     {"peak_flops_per_s", chipPeak},
                     {"hbm_bandwidth_bytes_per_s", chip.hbm.bandwidthBytesPerS},
                     {"hbm_capacity_bytes", chip.hbm.capacityBytes},
                     {"hbm_lockstep_channels", chip.hbm.lockstepChannels},
                     {"sram_capacity_bytes", chip.sram.capacityBytes},
                     {"fabric_ports", chip.fabricPorts.count},
                     {"fabric_port_bandwidth_bytes_per_s", chip.fabricPorts.link.bandwidthBytesPerS}});
  }
  nlohmann::ordered_json totalPeak = nlohmann::ordered_json::object();
  for (const auto& [name, precision] : tlm::precisionNames()) {
    if (peak.count(name)) totalPeak[name] = peak[name];
  }
  const FabricConfig& net = config.network;
  nlohmann::ordered_json network = {{"topology", topologyName(net.topology)}};
  if (net.topology == Topology::kSwitched) network["planes"] = net.planes;
  if (net.topology == Topology::kTorus) network["torus"] = net.torus;
  network["links"] = displayEdges(config).size();
  const PlacementConfig& p = config.placement;
  nlohmann::ordered_json placement = {{"tp", p.tp},
                                      {"pp", p.pp},
                                      {"dp", p.dp},
                                      {"ep", p.ep},
                                      {"experts", p.experts},
                                      {"all_reduce", hw::collectiveAlgorithmName(p.allReduce)},
                                      {"activation_memory_bytes", p.activationBytes}};
  if (p.disaggregation) {
    placement["prefill_chips"] = p.disaggregation->prefillChips;
    placement["decode_chips"] = p.disaggregation->decodeChips;
  }
  const int hosts = (config.chipCount() + config.host.chipsPerHost - 1) / config.host.chipsPerHost;
  return {{"name", config.name},
          {"description", config.description},
          {"chips", config.chipCount()},
          {"chip_types", types},
          {"network", network},
          {"host", {{"hosts", hosts}, {"memory_per_host_bytes", config.host.memoryBytes}}},
          {"placement", placement},
          {"totals",
           {{"peak_flops_per_s", totalPeak},
            {"hbm_bandwidth_bytes_per_s", hbmBandwidth},
            {"hbm_capacity_bytes", hbmCapacity},
            {"sram_capacity_bytes", sram},
            {"fabric_injection_bytes_per_s", injection},
            {"bisection_bandwidth_bytes_per_s", bisectionBandwidth(config)},
            {"host_memory_bytes", hosts * config.host.memoryBytes},
            {"rated_power_w", power}}}};
}

void printTree(std::ostream& out, const PlatformConfig& config) {
  const std::vector<int> counts = countsPerType(config);
  out << fmt::format("platform {} — {}\n", config.name, config.description);
  out << fmt::format("├─ chips: {} ({})\n", config.chipCount(), [&] {
    std::vector<std::string> parts;
    int first = 0;
    for (const ChipGroup& g : config.chips) {
      parts.push_back(g.count == 1 ? fmt::format("chip{} {}", first, g.type)
                                   : fmt::format("chip{}..chip{} {}", first, first + g.count - 1, g.type));
      first += g.count;
    }
    return fmt::format("{}", fmt::join(parts, ", "));
  }());
  for (std::size_t t = 0; t < config.chipTypes.size(); ++t) {
    const hw::ChipConfig& chip = config.chipTypes[t];
    const hw::TensorCoreConfig& tc = chip.tensorCore;
    out << fmt::format("├─ chip type {} (x{}), rated {}\n", chip.name, counts[t], q(chip.ratedPowerW, dim::kPower));
    out << fmt::format("│  ├─ tensor_core: {} x {}x{} arrays @ {}\n", tc.count, tc.arrayRows, tc.arrayCols,
                       q(tc.clockHz, dim::kFrequency));
    for (const auto& [name, precision] : tlm::precisionNames()) {
      if (tc.macsPerCell.of(precision) > 0) {
        out << fmt::format("│  │    peak {:<4} {}\n", name, q(tc.peakFlops(precision), dim::kFlopRate));
      }
    }
    out << fmt::format("│  ├─ vector_unit: {} lanes @ {}\n", chip.vectorUnit.lanes,
                       q(chip.vectorUnit.clockHz, dim::kFrequency));
    out << fmt::format(
        "│  ├─ hbm: {}, {} in {} channels x {} banks ({} groups), {} rows, {} scheduling{}\n",
        q(chip.hbm.capacityBytes, dim::kBytes), q(chip.hbm.bandwidthBytesPerS, dim::kBandwidth), chip.hbm.channels,
        chip.hbm.banks(), chip.hbm.bankGroups, q(chip.hbm.rowBytes, dim::kBytes), chip.hbm.scheduler,
        chip.hbm.lockstepChannels > 1 ? fmt::format(", timed in lockstep groups of {}", chip.hbm.lockstepChannels)
                                      : "");
    out << fmt::format("│  ├─ sram: {} in {} banks, {}, latency {}\n", q(chip.sram.capacityBytes, dim::kBytes),
                       chip.sram.banks, q(chip.sram.bandwidthBytesPerS, dim::kBandwidth),
                       q(chip.sram.latencyS, dim::kTime));
    out << fmt::format("│  ├─ interconnect: hop latency {}, {} per unit port\n",
                       q(chip.interconnect.hopLatencyS, dim::kTime),
                       q(chip.interconnect.bandwidthBytesPerS, dim::kBandwidth));
    out << fmt::format("│  └─ fabric_ports: {} x {} = {} per direction, latency {}\n", chip.fabricPorts.count,
                       q(chip.fabricPorts.link.bandwidthBytesPerS, dim::kBandwidth),
                       q(chip.fabricPorts.bandwidthBytesPerS(), dim::kBandwidth),
                       q(chip.fabricPorts.link.latencyS, dim::kTime));
  }
  const FabricConfig& net = config.network;
  std::string shape = topologyName(net.topology);
  if (net.topology == Topology::kSwitched) {
    const hw::SwitchConfig& sw = *net.fabricSwitch;
    shape += fmt::format(": {} plane{} of a {}-port switch (hop {}, {} flow control)", net.planes,
                         net.planes > 1 ? "s" : "", sw.ports, q(sw.hopLatencyS, dim::kTime),
                         sw.flowControl == hw::FlowControl::kCredit ? "credit" : "output-queued");
  } else if (net.topology == Topology::kTorus) {
    shape += fmt::format(" [{}]", fmt::join(net.torus, " x "));
  } else if (net.topology == Topology::kLeafSpine) {
    shape += fmt::format(": {} chips per leaf, {} spines, {} uplinks per leaf and spine", net.leafSpine->chipsPerLeaf,
                         net.leafSpine->spines, net.leafSpine->uplinksPerSpine);
  } else if (net.topology == Topology::kCustom) {
    shape += fmt::format(": {} switches, {} link bundles", net.switches.size(), net.links.size());
  }
  out << fmt::format("├─ network: {}\n", shape);
  if (net.topology != Topology::kNone) {
    const std::vector<DisplayEdge> edges = displayEdges(config);
    const std::size_t shown = std::min<std::size_t>(edges.size(), 12);
    for (std::size_t e = 0; e < shown; ++e) {
      out << fmt::format(
          "│  {} {} <-> {}: {}{}\n", e + 1 == edges.size() ? "└─" : "├─", edges[e].a, edges[e].b,
          q(edges[e].bandwidth, dim::kBandwidth),
          edges[e].ports > 0 ? fmt::format(" ({} port{})", edges[e].ports, edges[e].ports > 1 ? "s" : "") : "");
    }
    if (shown < edges.size()) out << fmt::format("│  └─ ... {} link bundles in all\n", edges.size());
  }
  const HostConfig& host = config.host;
  out << fmt::format("├─ host: {} per {} chips, link {} / {}\n", q(host.memoryBytes, dim::kBytes), host.chipsPerHost,
                     q(host.linkBandwidthBytesPerS, dim::kBandwidth), q(host.linkLatencyS, dim::kTime));
  const PlacementConfig& p = config.placement;
  out << fmt::format(
      "├─ placement: tp {} x pp {} x dp {} ({} all-reduce), ep {} ({} experts), activations {} per "
      "chip, KV {}-token blocks, {} placement{}\n",
      p.tp, p.pp, p.dp, hw::collectiveAlgorithmName(p.allReduce), p.ep, p.experts, q(p.activationBytes, dim::kBytes),
      p.kvCache.blockTokens, p.kvCache.placement,
      p.disaggregation
          ? fmt::format(", prefill on [{}], decode on [{}]", fmt::join(p.disaggregation->prefillChips, ","),
                        fmt::join(p.disaggregation->decodeChips, ","))
          : "");
  const nlohmann::ordered_json totals = summarize(config)["totals"];
  std::vector<std::string> peaks;
  for (const auto& [name, value] : totals["peak_flops_per_s"].items()) {
    peaks.push_back(fmt::format("{} {}", name, q(value.get<double>(), dim::kFlopRate)));
  }
  out << fmt::format("└─ totals: {} chip{}; peak {}\n", config.chipCount(), config.chipCount() > 1 ? "s" : "",
                     fmt::join(peaks, ", "));
  out << fmt::format("   HBM {} at {}; SRAM {}; host memory {}\n",
                     q(totals["hbm_capacity_bytes"].get<double>(), dim::kBytes),
                     q(totals["hbm_bandwidth_bytes_per_s"].get<double>(), dim::kBandwidth),
                     q(totals["sram_capacity_bytes"].get<double>(), dim::kBytes),
                     q(totals["host_memory_bytes"].get<double>(), dim::kBytes));
  out << fmt::format("   fabric injection {}, bisection {} (per direction); rated power {}\n",
                     q(totals["fabric_injection_bytes_per_s"].get<double>(), dim::kBandwidth),
                     q(totals["bisection_bandwidth_bytes_per_s"].get<double>(), dim::kBandwidth),
                     q(totals["rated_power_w"].get<double>(), dim::kPower));
}

void printDot(std::ostream& out, const PlatformConfig& config) {
  out << fmt::format("graph \"{}\" {{\n", config.name);
  out << fmt::format("  label=\"{} ({}, {} chips)\";\n  node [fontname=\"Helvetica\"];\n", config.name,
                     topologyName(config.network.topology), config.chipCount());
  for (int i = 0; i < config.chipCount(); ++i) {
    out << fmt::format("  \"{}\" [shape=box, label=\"{}\\n{}\"];\n", PlatformConfig::chipName(i),
                       PlatformConfig::chipName(i), config.chipConfig(i).name);
  }
  std::set<std::string> nodes;
  for (int i = 0; i < config.chipCount(); ++i) nodes.insert(PlatformConfig::chipName(i));
  for (const DisplayEdge& e : displayEdges(config)) {
    for (const std::string* end : {&e.a, &e.b}) {
      if (nodes.insert(*end).second) {
        out << fmt::format("  \"{}\" [shape=ellipse];\n", *end);
      }
    }
    out << fmt::format("  \"{}\" -- \"{}\" [label=\"{}\"];\n", e.a, e.b, q(e.bandwidth, dim::kBandwidth));
  }
  out << "}\n";
}

}  // namespace scoville::platform
