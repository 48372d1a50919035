#pragma once
// The attention kernel a software stack or a kernel microbenchmark runs, as the step planner
// lays it out on a GPU-like chip: the tiles its thread blocks compute (a block of query rows
// against successive blocks of KV tokens, padded to whole blocks), the MMA instructions it issues,
// how many blocks an SM holds, and whether decode splits the KV over more blocks with a combine
// kernel after (flash-decoding). Absent, attention is planned as exact GEMMs spread evenly over
// the arrays. The chip supplies the hardware side: TensorCoreConfig::units (the SMs the blocks
// are scheduled onto) and warpMmaRate; VectorUnitConfig::specialFunctionLanes (the softmax's exp).
// A chip whose tensor core is the RTL co-simulation (impl rtl, lockstep) times the padded GEMMs as
// its arrays do, without warp MMA or the grid.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/Schema.h"

namespace scoville::workload {

/// The MMA instructions a kernel's GEMMs are issued as.
enum class MmaKind {
  kWarpgroup,  ///< the array rate (Hopper's wgmma, Blackwell's tcgen05)
  kWarp,       ///< warp-level mma.sync, at the chip's tensor_core.warp_mma_rate
};
/// MmaKind's names in a kernel's YAML (`mma`), for Schema::choice.
std::vector<std::pair<std::string, MmaKind>> mmaKindNames();

/// Flash-decoding: the decode kernel splits each sequence's KV over `splits` blocks when the
/// unsplit grid would leave units idle, and a combine kernel merges the partial results.
struct SplitKvConfig {
  int64_t queryBlock = 64;    ///< query rows per block of the split kernel
  int64_t kvBlock = 128;      ///< KV tokens per iteration of the split kernel
  int64_t maxSplits = 128;    ///< at most this many splits per sequence
  int64_t blocksPerUnit = 1;  ///< split-kernel blocks an SM holds, as the heuristic counts the SMs' slots
  /// Split only when the unsplit grid has fewer blocks than this share of the units.
  double fill = 0.8;
  /// Of the split counts, the fewest whose wave efficiency (blocks / units over whole waves) is
  /// at least this share of the best one's.
  double minEfficiency = 0.85;

  static const config::Schema<SplitKvConfig>& schema();
};

struct AttentionKernelConfig {
  std::string name;
  MmaKind mma = MmaKind::kWarpgroup;
  int64_t queryBlock = 128;              ///< query rows per thread block
  int64_t kvBlock = 64;                  ///< KV tokens per iteration of a block
  int64_t blocksPerUnit = 1;             ///< blocks resident on one SM at once
  std::optional<SplitKvConfig> splitKv;  ///< absent: decode never splits

  /// Splits of each sequence's KV for a decode grid of `blocks` thread blocks on `units` SMs with
  /// at most `kvBlocks` KV blocks per sequence (FlashAttention 2's num_splits_heuristic): 1 when
  /// not split.
  int splits(uint64_t blocks, int units, uint64_t kvBlocks) const;

  static const config::Schema<AttentionKernelConfig>& schema();
};

bool operator==(const SplitKvConfig& a, const SplitKvConfig& b);
bool operator==(const AttentionKernelConfig& a, const AttentionKernelConfig& b);

}  // namespace scoville::workload
