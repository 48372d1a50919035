#include "platforms/Platform.h"

#include <algorithm>
#include <map>
#include <string>

namespace scoville::platform {

namespace {

/// The link two chip types can run together: the slower rate, the longer latency, the smaller
/// packets and the larger header.
hw::LinkConfig slowerLink(const hw::LinkConfig& a, const hw::LinkConfig& b) {
  hw::LinkConfig link;
  link.bandwidthBytesPerS = std::min(a.bandwidthBytesPerS, b.bandwidthBytesPerS);
  link.latencyS = std::max(a.latencyS, b.latencyS);
  link.mtuBytes = std::min(a.mtuBytes, b.mtuBytes);
  link.headerBytes = std::max(a.headerBytes, b.headerBytes);
  return link;
}

/// The link every chip of the platform can run, and the fewest fabric ports any chip has.
std::pair<hw::LinkConfig, int> commonLink(const PlatformConfig& config) {
  hw::LinkConfig link = config.chipConfig(0).fabricPorts.link;
  int ports = config.chipConfig(0).fabricPorts.count;
  for (int i = 1; i < config.chipCount(); ++i) {
    link = slowerLink(link, config.chipConfig(i).fabricPorts.link);
    ports = std::min(ports, config.chipConfig(i).fabricPorts.count);
  }
  return {link, ports};
}

hw::LinkConfig bundle(hw::LinkConfig link, int ports) {
  link.bandwidthBytesPerS *= ports;
  return link;
}

}  // namespace

uint64_t hostMemoryPerChip(const PlatformConfig& config) {
  return static_cast<uint64_t>(config.host.memoryBytes / config.host.chipsPerHost);
}

hw::FabricGraph buildFabricGraph(const PlatformConfig& config) {
  const FabricConfig& net = config.network;
  const int chips = config.chipCount();
  const auto [link, ports] = commonLink(config);
  hw::FabricGraph graph;
  switch (net.topology) {
    case Topology::kAllToAll: graph = hw::fullMeshGraph(chips, link, ports / (chips - 1)); break;
    case Topology::kRing: graph = hw::ringGraph(chips, link, ports / 2); break;
    case Topology::kTorus: {
      int neighbours = 0;  // neighbour bundles per chip, as checked by the configuration
      for (const int d : net.torus) neighbours += d >= 2 ? 2 : 0;
      graph = hw::torusGraph(net.torus, link, ports / neighbours);
      break;
    }
    case Topology::kLeafSpine: {
      const LeafSpineConfig& ls = *net.leafSpine;
      graph = hw::leafSpineGraph(chips, ls.chipsPerLeaf, ls.spines, link, ports, ls.uplink, ls.uplinksPerSpine,
                                 net.fabricSwitch->hopLatencyS, net.fabricSwitch->hopLatencyS);
      break;
    }
    case Topology::kCustom: {
      graph.chips = chips;
      std::map<std::string, int> ids;
      for (int i = 0; i < chips; ++i) ids[PlatformConfig::chipName(i)] = i;
      for (std::size_t s = 0; s < net.switches.size(); ++s) {
        ids[net.switches[s].name] = chips + static_cast<int>(s);
        graph.switchHopLatencyS.push_back(net.switches[s].hopLatencyS);
      }
      for (const CustomLink& l : net.links) {
        const int a = ids.at(l.a);
        const int b = ids.at(l.b);
        hw::LinkConfig edge;
        if (a < chips && b < chips) {
          edge = slowerLink(config.chipConfig(a).fabricPorts.link, config.chipConfig(b).fabricPorts.link);
        } else if (a < chips || b < chips) {
          edge = config.chipConfig(std::min(a, b)).fabricPorts.link;
        } else {
          edge = *net.switchLink;
        }
        graph.edges.push_back(hw::FabricGraph::Edge{a, b, bundle(edge, l.ports)});
      }
      break;
    }
    case Topology::kNone:
    case Topology::kSwitched: break;
  }
  graph.chipForwardLatencyS = net.chipForwardLatencyS;
  return graph;
}

Platform::Platform(const sc_core::sc_module_name& name, const PlatformConfig& config)
    : sc_core::sc_module(name),
      m_config(config),
      m_stats(basename(), "platform " + config.name),
      m_networkStats("network", std::string("inter-chip network (") + topologyName(config.network.topology) + ")"),
      m_hostStats("host", "host links and the host memory each chip may address") {
  const hw::HostLinkConfig host{m_config.host.linkBandwidthBytesPerS, m_config.host.linkLatencyS,
                                hostMemoryPerChip(m_config)};
  for (int i = 0; i < m_config.chipCount(); ++i) {
    m_chips.push_back(std::make_unique<hw::Chip>(PlatformConfig::chipName(i).c_str(), m_config.chipConfig(i)));
    m_stats.addChild(m_chips.back()->stats());
    m_hostLinks.push_back(std::make_unique<hw::HostLink>(("host_link" + std::to_string(i)).c_str(), i, host));
    m_hostLinks.back()->attachActivity(m_chips.back()->activityBus());
    m_hostStats.addChild(m_hostLinks.back()->stats());
  }
  switch (m_config.network.topology) {
    case Topology::kNone: break;
    case Topology::kSwitched: buildSwitched(); break;
    default: buildGraph(); break;
  }
  if (m_config.network.topology != Topology::kNone) {
    for (const auto& fabric : m_fabricInterfaces) m_networkStats.addChild(fabric->stats());
    m_stats.addChild(m_networkStats);
  }
  attachPower();
}

void Platform::subscribeActivity(tlm::ActivityListener& listener) {
  for (const auto& chip : m_chips) chip->activityBus().subscribe(listener);
  m_networkActivity.subscribe(listener);
}

void Platform::attachPower() {
  std::vector<power::ChipPowerSpec> specs;
  for (int i = 0; i < chipCount(); ++i) {
    const hw::ChipConfig& chip = m_config.chipConfig(i);
    specs.push_back(power::ChipPowerSpec{PlatformConfig::chipName(i), chip.name, chip.ratedPowerW,
                                         chip.power ? &*chip.power : nullptr, chip.hbm.burstBytes,
                                         chip.thermal ? &*chip.thermal : nullptr});
  }
  // Switches of the switched and leaf-spine topologies share the `network.switch` type; the
  // switches of a custom topology have no energy model.
  const power::SwitchEnergyConfig* switchEnergy = m_config.network.fabricSwitch && m_config.network.fabricSwitch->power
                                                      ? &*m_config.network.fabricSwitch->power
                                                      : nullptr;
  int switches = static_cast<int>(m_switches.size());
  if (m_graph != nullptr && m_config.network.topology == Topology::kLeafSpine) {
    switches = m_graph->graph().nodes() - m_graph->graph().chips;
  }
  m_power = std::make_unique<power::PowerMonitor>(m_config.power, specs, switchEnergy, switches);
  if (!m_power->modelled()) return;
  const power::GovernorConfig& governor = m_config.power.governor;
  for (int i = 0; i < chipCount(); ++i) {
    hw::Chip& chip = *m_chips[static_cast<std::size_t>(i)];
    power::ChipPower& listener = *m_power->chip(static_cast<std::size_t>(i));
    chip.activityBus().subscribe(listener);
    // The thermal model and the governor are the chip's power manager's; they read the chip's power
    // model as telemetry.
    if (chip.config().thermal) chip.powerManager().thermal(*chip.config().thermal, chip.config().ratedPowerW, listener);
    chip.powerManager().govern(governor, governor.capW(chip.config().ratedPowerW), listener);
  }
  m_networkActivity.subscribe(*m_power);
}

void Platform::settlePower() {
  const double endS = sc_core::sc_time_stamp().to_seconds();
  for (std::size_t i = 0; i < m_chips.size(); ++i) {
    // A mirrored chip is not simulated: its thermal model is its leader's (PowerMonitor::setMirrors).
    m_chips[i]->powerManager().settle(endS, !(m_power && m_power->mirrored(i)));
  }
}

void Platform::buildSwitched() {
  const int chips = chipCount();
  const int planes = m_config.network.planes;
  for (int i = 0; i < chips; ++i) {
    const hw::FabricPortsConfig& ports = m_config.chipConfig(i).fabricPorts;
    std::vector<double> weights;
    for (int p = 0; p < planes; ++p) {
      weights.push_back(static_cast<double>(ports.portsInPlane(planes, p)));
    }
    m_fabricInterfaces.push_back(
        std::make_unique<hw::FabricInterface>(("fabric" + std::to_string(i)).c_str(), i, std::move(weights)));
  }
  for (int p = 0; p < planes; ++p) {
    // The switch model routes by chip id, so it needs one port per chip; the configured radix
    // bounds the links attached, which the configuration checks (PlatformChecks.cpp).
    hw::SwitchConfig sw = *m_config.network.fabricSwitch;
    sw.ports = chips;
    // A chip's bundle of k ports in this plane enters the switch through k physical input ports,
    // each with its own buffer: the bundle's credit window is k buffers.
    int fewest = 0;
    for (int i = 0; i < chips; ++i) {
      const hw::FabricPortsConfig& ports = m_config.chipConfig(i).fabricPorts;
      const int inPlane = ports.portsInPlane(planes, p);
      fewest = i == 0 ? inPlane : std::min(fewest, inPlane);
    }
    sw.inputBufferBytes *= fewest;
    m_switches.push_back(std::make_unique<hw::Switch>(("switch" + std::to_string(p)).c_str(), sw));
    m_switches.back()->attachActivity(m_networkActivity);
    for (int i = 0; i < chips; ++i) {
      const hw::FabricPortsConfig& ports = m_config.chipConfig(i).fabricPorts;
      const int inPlane = ports.portsInPlane(planes, p);
      m_switchPorts.push_back(std::make_unique<hw::SwitchPort>(
          ("port" + std::to_string(p) + "_" + std::to_string(i)).c_str(), bundle(ports.link, inPlane), i));
      m_fabricInterfaces[static_cast<std::size_t>(i)]->toFabric.bind(m_switchPorts.back()->fromChip);
      m_switches.back()->attach(*m_switchPorts.back());
      m_networkStats.addChild(m_switchPorts.back()->stats());
    }
    m_networkStats.addChild(m_switches.back()->stats());
  }
}

bool Platform::alikeLanes() const {
  if (m_config.network.topology != Topology::kSwitched || m_config.network.planes < 2) return false;
  return std::all_of(m_fabricInterfaces.begin(), m_fabricInterfaces.end(),
                     [](const auto& f) { return f->equalLanes(); });
}

void Platform::mirrorAlikeLanes(bool on) {
  const bool alike = on && alikeLanes();
  for (const auto& f : m_fabricInterfaces) f->setAlikeLanes(alike);
}

void Platform::buildGraph() {
  m_graph = std::make_unique<hw::GraphFabric>("fabric", buildFabricGraph(m_config));
  m_graph->attachActivity(m_networkActivity);
  for (int i = 0; i < chipCount(); ++i) {
    m_fabricInterfaces.push_back(
        std::make_unique<hw::FabricInterface>(("fabric" + std::to_string(i)).c_str(), i, std::vector<double>{1.0}));
    m_fabricInterfaces.back()->toFabric.bind(m_graph->socket);
  }
  m_networkStats.addChild(m_graph->stats());
}

}  // namespace scoville::platform
