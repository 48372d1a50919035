#pragma once
// The elaborated platform: the SystemC netlist built from a PlatformConfig.
//
// Netlist: chip0..chipN-1 (hw::Chip), one FabricInterface per chip (its kSend entry point), and
// the network of the configured topology:
//  - switched: one hw::Switch per plane; every chip has one SwitchPort per plane whose link
//    aggregates the chip's ports in that plane; the FabricInterface stripes messages over planes
//    in proportion to those ports.
//  - all_to_all, ring, torus, leaf_spine, custom: one hw::GraphFabric holding every link and
//    switch (output-queued, cut-through, shortest-path routing).
//  - none: no fabric; fabric(i) does not exist.
// Every chip also gets a host link (hw::HostLink) to its share of its host's memory
// (host.memory / host.chips_per_host), the path of KV-cache swap traffic. Their statistics are a
// group of their own (hostStats()), reported by the runs that use the links.

#include <memory>
#include <systemc>
#include <vector>

#include "hw/HostLink.h"
#include "hw/chip/Chip.h"
#include "hw/network/FabricInterface.h"
#include "hw/network/GraphFabric.h"
#include "hw/network/Switch.h"
#include "hw/network/SwitchPort.h"
#include "platforms/PlatformConfig.h"
#include "power/PowerMonitor.h"
#include "stats/StatsGroup.h"

namespace scoville::platform {

/// The fabric graph of a non-switched, non-empty topology (all_to_all, ring, torus, leaf_spine,
/// custom). Links between two chips run at the slower end's rate and the longer latency.
hw::FabricGraph buildFabricGraph(const PlatformConfig& config);

/// Bytes of host memory each chip may address: its host's memory split evenly over the host's chips.
uint64_t hostMemoryPerChip(const PlatformConfig& config);

class Platform : public sc_core::sc_module {
 public:
  /// Elaborates the chips and their wiring. Call once per process, before sc_start().
  Platform(const sc_core::sc_module_name& name, const PlatformConfig& config);
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  const PlatformConfig& config() const { return m_config; }
  int chipCount() const { return static_cast<int>(m_chips.size()); }
  hw::Chip& chip(int index) { return *m_chips.at(static_cast<std::size_t>(index)); }
  const hw::Chip& chip(int index) const { return *m_chips.at(static_cast<std::size_t>(index)); }
  /// Chip `index`'s fabric interface: bind initiators of its kSend messages to fabric(i).fromChip.
  hw::FabricInterface& fabric(int index) { return *m_fabricInterfaces.at(static_cast<std::size_t>(index)); }
  /// Chip `index`'s link to its host's memory: bind the chip's copy engines to hostLink(i).socket.
  hw::HostLink& hostLink(int index) { return *m_hostLinks.at(static_cast<std::size_t>(index)); }
  /// Statistics of the host links (not part of stats(): runs that use them report them).
  const stats::Group& hostStats() const { return m_hostStats; }
  /// Activity (link and switch bytes, packets) of the whole network; power listeners subscribe.
  tlm::ActivityBus& networkActivity() { return m_networkActivity; }
  /// Subscribes `listener` to the activity of every chip and of the network (before sc_start()).
  void subscribeActivity(tlm::ActivityListener& listener);
  /// Whether the fabric's lanes are alike: a switched fabric of several planes in which every chip
  /// has as many ports in each plane (each plane then sees the same messages).
  bool alikeLanes() const;
  /// Alike lanes: each message is timed on plane 0 alone, standing for every plane
  /// (hw::FabricInterface::setAlikeLanes: the same completion times; the other planes' switches
  /// stay idle and plane 0's counts every plane's bytes). No effect without alike lanes. Call
  /// before sc_start().
  void mirrorAlikeLanes(bool on);
  /// Statistics of every chip and of the network, one group per component.
  const stats::Group& stats() const { return m_stats; }
  /// Has every chip's power manager announce what it has not yet (its clocks' active time): call
  /// before reading the power model at the end of a run.
  void settlePower();
  /// The power model, listening to every chip and the network (docs/power.md).
  power::PowerMonitor& power() { return *m_power; }
  const power::PowerMonitor& power() const { return *m_power; }

 private:
  void buildSwitched();
  void buildGraph();
  void attachPower();

  PlatformConfig m_config;
  std::vector<std::unique_ptr<hw::Chip>> m_chips;
  std::vector<std::unique_ptr<hw::FabricInterface>> m_fabricInterfaces;
  std::vector<std::unique_ptr<hw::Switch>> m_switches;         // switched: one per plane
  std::vector<std::unique_ptr<hw::SwitchPort>> m_switchPorts;  // switched: [plane * chips + chip]
  std::unique_ptr<hw::GraphFabric> m_graph;
  std::vector<std::unique_ptr<hw::HostLink>> m_hostLinks;
  tlm::ActivityBus m_networkActivity;
  std::unique_ptr<power::PowerMonitor> m_power;
  stats::Group m_stats;
  stats::Group m_networkStats;
  stats::Group m_hostStats;
};

}  // namespace scoville::platform
