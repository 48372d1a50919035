#pragma once
// What a KV placement policy (hw::makeKvPlacementPolicy; serving.kv_cache_placement or the
// platform's placement.kv_cache.placement) means for a serving run's elaboration: which tiers a
// replica's cache gets beside its chips' HBM, and so whether its chips need KV fetch engines.
// One row per policy in a table, looked up by name once; the engine asks the row, never the name.

#include <string>
#include <vector>

namespace scoville::runtime {

/// The tiers a KV placement policy gives a replica's cache beyond local HBM.
struct KvPlacementMode {
  const char* policy = "";  ///< the placement policy's name (hw::kvPlacementPolicyNames)
  /// spill_to_remote: each chip lends kv_remote_share of its KV memory to the previous chip of
  /// its pool, read and appended over the fabric.
  bool remoteTier = false;
  /// offload_to_host: each chip's share of its host's memory, over its host link.
  bool hostTier = false;

  /// Whether running requests' KV may live off the chips (a remote or a host tier): every chip
  /// then gets a KvFetcher and no rank mirrors.
  bool offChip() const { return remoteTier || hostTier; }

  /// The row of placement policy `name`; throws std::invalid_argument naming the known ones for a
  /// name the table lacks.
  static const KvPlacementMode& of(const std::string& name);
  /// The table's policy names, in its order.
  static std::vector<std::string> names();
};

}  // namespace scoville::runtime
