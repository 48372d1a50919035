#pragma once
// A platform description as read from platforms/*.yaml: chip types defined once, the chips that
// instantiate them, the inter-chip network, the host, and the explicit placement of model state.
// Parsing checks everything that can be checked without a model: references between sections,
// port budgets of chips and switches, and the parallelism against the chip count. What depends on
// the model (memory fit) is checked by workload::checkMemoryFit.

#include <optional>
#include <string>
#include <vector>

#include "hw/chip/ChipConfig.h"
#include "hw/kv/KvCacheConfig.h"
#include "hw/network/Collective.h"
#include "hw/network/NetworkConfig.h"
#include "config/Schema.h"

namespace scoville::platform {

/// `count` chips of one chip type; chips are numbered in the order the groups are listed.
struct ChipGroup {
  std::string type;
  int count = 0;

  static const config::Schema<ChipGroup>& schema();
};

enum class Topology {
  kNone,       ///< one chip, no fabric
  kSwitched,   ///< every chip's ports spread over `planes` single-stage switches (NVLink/NVSwitch, Tomahawk planes)
  kAllToAll,   ///< direct links between every pair of chips (full mesh)
  kRing,       ///< direct links to the two neighbours on a ring
  kTorus,      ///< direct links to the neighbours on a wrap-around grid of `torus` dimensions
  kLeafSpine,  ///< chips on leaf switches, every leaf linked to every spine
  kCustom,     ///< switches and links listed one by one
};
const char* topologyName(Topology topology);

struct LeafSpineConfig {
  int chipsPerLeaf = 0;
  int spines = 0;
  int uplinksPerSpine = 0;  ///< links from each leaf to each spine
  hw::LinkConfig uplink;

  static const config::Schema<LeafSpineConfig>& schema();
};

/// A switch of a custom topology.
struct CustomSwitch {
  std::string name;
  int ports = 0;
  double hopLatencyS = 0.0;

  static const config::Schema<CustomSwitch>& schema();
};

/// A link bundle of a custom topology between two endpoints (chip or switch names).
struct CustomLink {
  std::string a;
  std::string b;
  int ports = 1;  ///< parallel links in the bundle; each uses one port at either end

  static const config::Schema<CustomLink>& schema();
};

/// The inter-chip network (key `network`).
struct FabricConfig {
  Topology topology = Topology::kNone;
  int planes = 1;                                ///< switched
  std::optional<hw::SwitchConfig> fabricSwitch;  ///< switched, leaf_spine: the switch type
  std::vector<int> torus;                        ///< torus dimensions
  std::optional<LeafSpineConfig> leafSpine;
  std::vector<CustomSwitch> switches;        ///< custom
  std::vector<CustomLink> links;             ///< custom
  std::optional<hw::LinkConfig> switchLink;  ///< custom: switch-to-switch links
  double chipForwardLatencyS = 0.0;          ///< ring, torus: a chip forwarding a message adds this

  static const config::Schema<FabricConfig>& schema();
};

/// Host memory reached by each chip over its own host link (PCIe/CXL).
struct HostConfig {
  double memoryBytes = 0.0;  ///< per host
  int chipsPerHost = 1;
  double linkBandwidthBytesPerS = 0.0;  ///< per chip, per direction
  double linkLatencyS = 0.0;

  static const config::Schema<HostConfig>& schema();
};

/// How experts are assigned to the chips of an expert-parallel group.
enum class ExpertPlacement { kContiguous, kRoundRobin, kExplicit };

/// Prefill/decode disaggregation: disjoint chip sets per phase.
struct DisaggregationConfig {
  std::vector<int> prefillChips;
  std::vector<int> decodeChips;

  static const config::Schema<DisaggregationConfig>& schema();
};

/// The explicit placement of model state: chips = tp x pp x dp; an expert-parallel group spans
/// `ep` chips of one pipeline stage (ep divides tp x dp).
struct PlacementConfig {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
  std::string experts;           ///< contiguous, round_robin or explicit
  std::vector<int> expertMap;    ///< explicit: EP rank of each expert
  double activationBytes = 0.0;  ///< per chip, reserved for activations and workspace
  hw::CollectiveAlgorithm allReduce = hw::CollectiveAlgorithm::kRing;  ///< of tensor-parallel groups
  hw::KvCacheConfig kvCache;
  std::optional<DisaggregationConfig> disaggregation;

  /// EP rank holding each of `experts` experts (contiguous blocks, round robin, or the map).
  /// Throws std::invalid_argument when an explicit map does not have exactly `experts` entries.
  std::vector<int> expertOwners(int experts) const;
  static const config::Schema<PlacementConfig>& schema();
};

struct PlatformConfig {
  std::string name;
  std::string description;
  std::vector<hw::ChipConfig> chipTypes;
  std::vector<ChipGroup> chips;
  FabricConfig network;
  HostConfig host;
  PlacementConfig placement;
  power::PowerManagementConfig power;

  int chipCount() const;
  /// The chip type of chip `index` (0-based, in group order).
  const hw::ChipConfig& chipConfig(int index) const;
  /// Name of chip `index`: "chip<index>".
  static std::string chipName(int index);

  static const config::Schema<PlatformConfig>& schema();
};

}  // namespace scoville::platform
