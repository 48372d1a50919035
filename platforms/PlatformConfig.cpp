#include "platforms/PlatformConfig.h"

#include "platforms/PlatformChecks.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace scoville::platform {

using namespace scoville::config;

namespace {

const std::vector<std::pair<std::string, Topology>>& topologyNames() {
  static const std::vector<std::pair<std::string, Topology>> names = {
      {"none", Topology::kNone},    {"switched", Topology::kSwitched}, {"all_to_all", Topology::kAllToAll},
      {"ring", Topology::kRing},    {"torus", Topology::kTorus},       {"leaf_spine", Topology::kLeafSpine},
      {"custom", Topology::kCustom}};
  return names;
}

}  // namespace

const char* topologyName(Topology topology) {
  for (const auto& [name, value] : topologyNames()) {
    if (value == topology) return name.c_str();
  }
  return "?";
}

const Schema<ChipGroup>& ChipGroup::schema() {
  static const Schema<ChipGroup> s =
      Schema<ChipGroup>("chip_group", "Chips of one type; chips are numbered chip0, chip1, ... in list order.")
          .text("type", &ChipGroup::type, required(), "name of a chip type in chip_types")
          .integer("count", &ChipGroup::count, optional("1"), between(1, 65536), "chips of this type");
  return s;
}

const Schema<LeafSpineConfig>& LeafSpineConfig::schema() {
  static const Schema<LeafSpineConfig> s =
      Schema<LeafSpineConfig>("leaf_spine", "Two-tier switched network: chips on leaves, every leaf on every spine.")
          .integer("chips_per_leaf", &LeafSpineConfig::chipsPerLeaf, required(), between(1, 65536),
                   "chips attached to one leaf switch (all of a chip's fabric ports go to its leaf)")
          .integer("spines", &LeafSpineConfig::spines, required(), between(0, 4096), "spine switches")
          .integer("uplinks_per_spine", &LeafSpineConfig::uplinksPerSpine, optional("1"), between(0, 4096),
                   "parallel links from each leaf to each spine")
          .child("uplink", &LeafSpineConfig::uplink, hw::LinkConfig::schema(), required(), "one leaf-spine link");
  return s;
}

const Schema<CustomSwitch>& CustomSwitch::schema() {
  static const Schema<CustomSwitch> s =
      Schema<CustomSwitch>("custom_switch", "A switch of a custom topology (output-queued, cut-through).")
          .text("name", &CustomSwitch::name, required(), "name the links refer to")
          .integer("ports", &CustomSwitch::ports, required(), between(1, 65536), "radix")
          .quantity("hop_latency", &CustomSwitch::hopLatencyS, dim::kTime, required(), nonNegative(),
                    "header in to header out");
  return s;
}

const Schema<CustomLink>& CustomLink::schema() {
  static const Schema<CustomLink> s =
      Schema<CustomLink>("custom_link", "A bundle of parallel links between two endpoints of a custom topology.")
          .text("a", &CustomLink::a, required(), "one end: a chip (chip0, chip1, ...) or a switch name")
          .text("b", &CustomLink::b, required(), "the other end")
          .integer("ports", &CustomLink::ports, optional("1"), between(1, 4096),
                   "parallel links; each takes one port at both ends");
  return s;
}

const Schema<FabricConfig>& FabricConfig::schema() {
  std::vector<std::pair<std::string, Topology>> topologies = topologyNames();
  static const Schema<FabricConfig> s =
      Schema<FabricConfig>("network",
                           "The inter-chip network. Links take their rate and latency from the chips' fabric_ports "
                           "(the slower end where two chip types meet).")
          .choice("topology", &FabricConfig::topology, topologies, required(),
                  "none (one chip), switched (ports spread over parallel switch planes), all_to_all (full mesh), "
                  "ring, torus, leaf_spine, custom (switches and links listed)")
          .integer("planes", &FabricConfig::planes, optional("1"), between(1, 1024),
                   "switched: parallel single-stage switches; each chip spreads its ports over them and stripes "
                   "every message across all planes")
          .optionalChild("switch", &FabricConfig::fabricSwitch, hw::SwitchConfig::schema(),
                         "switched, leaf_spine: the switch type (radix, hop latency, buffers, flow control; leaf_spine "
                         "switches are output-queued)")
          .integerList("torus", &FabricConfig::torus, optional("[]"), between(1, 4096), true,
                       "torus: dimensions, whose product is the chip count")
          .optionalChild("leaf_spine", &FabricConfig::leafSpine, LeafSpineConfig::schema(), "leaf_spine: its shape")
          .quantity("chip_forward_latency", &FabricConfig::chipForwardLatencyS, dim::kTime, optional("0 s"),
                    nonNegative(), "ring, torus: latency a chip adds when it forwards a message to its next hop")
          .childList("switches", &FabricConfig::switches, CustomSwitch::schema(), optional("[]"),
                     "custom: the switches")
          .childList("links", &FabricConfig::links, CustomLink::schema(), optional("[]"), "custom: the link bundles")
          .optionalChild("switch_link", &FabricConfig::switchLink, hw::LinkConfig::schema(),
                         "custom: parameters of switch-to-switch links");
  return s;
}

const Schema<HostConfig>& HostConfig::schema() {
  static const Schema<HostConfig> s =
      Schema<HostConfig>("host", "Host servers: their memory and each chip's link to it (PCIe/CXL).")
          .quantity(
              "memory", &HostConfig::memoryBytes, dim::kBytes, required(), nonNegative(),
              "DRAM per host, usable as a KV-cache tier and swap space; each of its chips addresses an equal share")
          .integer("chips_per_host", &HostConfig::chipsPerHost, required(), between(1, 4096),
                   "chips sharing one host's memory")
          .quantity("link_bandwidth", &HostConfig::linkBandwidthBytesPerS, dim::kBandwidth, required(), positive(),
                    "each chip's host link, per direction")
          .quantity("link_latency", &HostConfig::linkLatencyS, dim::kTime, required(), nonNegative(),
                    "one-way latency of the host link");
  return s;
}

const Schema<DisaggregationConfig>& DisaggregationConfig::schema() {
  static const Schema<DisaggregationConfig> s =
      Schema<DisaggregationConfig>("disaggregation", "Prefill and decode on disjoint sets of chips.")
          .integerList("prefill_chips", &DisaggregationConfig::prefillChips, required(), between(0, 65535), false,
                       "chips that run prefill")
          .integerList("decode_chips", &DisaggregationConfig::decodeChips, required(), between(0, 65535), false,
                       "chips that run decode (tp x pp x dp of them)");
  return s;
}

std::vector<int> PlacementConfig::expertOwners(int experts) const {
  std::vector<int> owners(static_cast<std::size_t>(experts));
  if (this->experts == "explicit") {
    if (static_cast<int>(expertMap.size()) != experts) {
      throw std::invalid_argument(
          fmt::format("placement.expert_map lists {} experts, the model has {}", expertMap.size(), experts));
    }
    return expertMap;
  }
  for (int e = 0; e < experts; ++e) {
    // contiguous: ranks hold ceil/floor blocks in order; round_robin: expert e on rank e mod ep.
    owners[static_cast<std::size_t>(e)] =
        this->experts == "round_robin" ? e % ep : static_cast<int>(static_cast<long long>(e) * ep / experts);
  }
  return owners;
}

const Schema<PlacementConfig>& PlacementConfig::schema() {
  static const Schema<PlacementConfig> s =
      Schema<PlacementConfig>("placement",
                              "Explicit placement of model state: weights sharded tp ways within a pipeline stage, "
                              "pp stages, dp replicas (tp x pp x dp = chips, or = decode chips when disaggregated); "
                              "experts spread over ep chips of a stage; KV cache kept on the chip that computes it.")
          .integer("tp", &PlacementConfig::tp, optional("1"), between(1, 65536),
                   "tensor-parallel degree: chips sharing each layer's weights (heads, FFN columns, vocab)")
          .integer("pp", &PlacementConfig::pp, optional("1"), between(1, 65536),
                   "pipeline-parallel degree: stages holding consecutive layers")
          .integer("dp", &PlacementConfig::dp, optional("1"), between(1, 65536), "data-parallel replicas")
          .integer("ep", &PlacementConfig::ep, optional("1"), between(1, 65536),
                   "expert-parallel degree: chips of a stage the experts are spread over")
          .implementation("experts", &PlacementConfig::experts, {"contiguous", "round_robin", "explicit"},
                          optional("{impl: contiguous}"),
                          "expert-to-chip map: contiguous blocks, round robin, or explicit (expert_map)")
          .integerList("expert_map", &PlacementConfig::expertMap, optional("[]"), between(0, 65535), true,
                       "explicit: the EP rank holding each expert, in expert order")
          .quantity("activation_memory", &PlacementConfig::activationBytes, dim::kBytes, optional("0 B"), nonNegative(),
                    "HBM per chip reserved for activations and workspace")
          .choice("all_reduce", &PlacementConfig::allReduce,
                  {{"ring", hw::CollectiveAlgorithm::kRing},
                   {"direct", hw::CollectiveAlgorithm::kDirect},
                   {"tree", hw::CollectiveAlgorithm::kTree},
                   {"auto", hw::CollectiveAlgorithm::kAuto}},
                  optional("ring"),
                  "all-reduce algorithm of the tensor-parallel groups: ring (2(tp-1) steps of 1/tp of the buffer: "
                  "bandwidth-optimal), direct (one shot, each chip sends its whole buffer to every peer: "
                  "latency-optimal), tree (reduce then broadcast, 2 log2(tp) steps), auto (per message, the "
                  "one an alpha-beta estimate with the chip's fabric injection bandwidth and link latency "
                  "finds fastest, as NCCL's tuner does)")
          .child("kv_cache", &PlacementConfig::kvCache, hw::KvCacheConfig::schema(), optional("{}"),
                 "paging and tier placement of the KV cache")
          .optionalChild("disaggregation", &PlacementConfig::disaggregation, DisaggregationConfig::schema(),
                         "prefill/decode disaggregation; absent: every chip does both");
  return s;
}

int PlatformConfig::chipCount() const {
  int n = 0;
  for (const ChipGroup& group : chips) n += group.count;
  return n;
}

const hw::ChipConfig& PlatformConfig::chipConfig(int index) const {
  int first = 0;
  for (const ChipGroup& group : chips) {
    if (index < first + group.count)
      return chipTypes[static_cast<std::size_t>(detail::chipTypeIndex(*this, group.type))];
    first += group.count;
  }
  throw std::out_of_range(fmt::format("chip {} of platform '{}' does not exist ({} chips)", index, name, first));
}

std::string PlatformConfig::chipName(int index) {
  return "chip" + std::to_string(index);
}

const Schema<PlatformConfig>& PlatformConfig::schema() {
  static const Schema<PlatformConfig> s =
      Schema<PlatformConfig>("platform", "Root of a platform file (platforms/*.yaml).")
          .text("name", &PlatformConfig::name, required(), "platform name, used in reports")
          .text("description", &PlatformConfig::description, required(), "one line on what this platform is")
          .childList("chip_types", &PlatformConfig::chipTypes, hw::ChipConfig::schema(), required(),
                     "chip types, each defined once")
          .childList("chips", &PlatformConfig::chips, ChipGroup::schema(), required(),
                     "the chips: groups of one chip type")
          .child("network", &PlatformConfig::network, FabricConfig::schema(), required(), "inter-chip network")
          .child("host", &PlatformConfig::host, HostConfig::schema(), required(), "host memory and links")
          .child("placement", &PlatformConfig::placement, PlacementConfig::schema(), optional("{}"),
                 "placement of weights, experts and KV cache")
          .child("power", &PlatformConfig::power, power::PowerManagementConfig::schema(), optional("{}"),
                 "power timeline and sustained-power windows")
          .check("power.governor other than none needs every chip type's power.dvfs to list two points or more",
                 [](const PlatformConfig& c, const Node& node) {
                   if (c.power.governor.kind == power::GovernorKind::kNone) return;
                   for (std::size_t i = 0; i < c.chipTypes.size(); ++i) {
                     const hw::ChipConfig& chip = c.chipTypes[i];
                     if (!chip.power || chip.power->dvfs.size() < 2) {
                       node.at("power")
                           .at("governor")
                           .fail(ErrorKind::kInvalidConfig,
                                 fmt::format("'{}.power.governor' lowers the clock of every chip, but chip type '{}' "
                                             "(chip_types[{}]) has {} DVFS points in power.dvfs (needs 2 or more)",
                                             node.path(), chip.name, i, chip.power ? chip.power->dvfs.size() : 0));
                     }
                   }
                 })
          .check("chips[].type names a chip type of chip_types, each type is defined once",
                 detail::checkPlatformChipTypes)
          .check("the network's ports, switches and links are consistent with the chips", detail::checkPlatformNetwork)
          .check("tp x pp x dp equals the (decode) chip count; ep divides tp x dp; disaggregation sets are disjoint",
                 detail::checkPlatformPlacement)
          .check("placement.kv_cache.preemption swap needs host memory to swap to (host.memory > 0)",
                 detail::checkPlatformHost);
  return s;
}

}  // namespace scoville::platform
