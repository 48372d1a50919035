#include "workloads/AttentionKernel.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "workloads/StepPlanSizes.h"

namespace scoville::workload {

using namespace scoville::config;

const Schema<SplitKvConfig>& SplitKvConfig::schema() {
  using T = SplitKvConfig;
  static const Schema<T> s =
      Schema<T>("split_kv",
                "Flash-decoding: when the decode grid would leave SMs idle, each sequence's KV is split over more "
                "thread blocks and a combine kernel merges their partial results.")
          .integer("query_block", &T::queryBlock, optional("64"), between(1, 4096),
                   "query rows per thread block of the split kernel")
          .integer("kv_block", &T::kvBlock, optional("128"), between(1, 65536),
                   "KV tokens per iteration of the split kernel")
          .integer("max_splits", &T::maxSplits, optional("128"), between(1, 4096), "most splits of one sequence")
          .integer("blocks_per_unit", &T::blocksPerUnit, optional("1"), between(1, 64),
                   "split-kernel thread blocks one SM holds: the heuristic counts SMs x this as its slots")
          .number("fill", &T::fill, optional("0.8"), between(0, 64),
                  "split only when the unsplit grid has fewer thread blocks than this share of the SMs")
          .number("min_efficiency", &T::minEfficiency, optional("0.85"), between(0, 1),
                  "take the fewest splits whose wave efficiency is at least this share of the best split count's");
  return s;
}

std::vector<std::pair<std::string, MmaKind>> mmaKindNames() {
  return {{"warpgroup", MmaKind::kWarpgroup}, {"warp", MmaKind::kWarp}};
}

const Schema<AttentionKernelConfig>& AttentionKernelConfig::schema() {
  using T = AttentionKernelConfig;
  static const Schema<T> s =
      Schema<T>("attention_kernel",
                "The attention kernel as the planner lays it out (workloads/AttentionKernel.h): query blocks "
                "against KV blocks, padded to whole blocks, on thread blocks scheduled onto the chip's SMs "
                "(tensor_core.units), softmax exps on its special-function lanes. Absent: exact GEMMs spread "
                "evenly over the arrays.")
          .text("name", &T::name, required(), "the kernel it stands for, with its source")
          .choice("mma", &T::mma, mmaKindNames(), optional("warpgroup"),
                  "the MMA instructions its GEMMs are issued as: warpgroup (the array rate) or warp (mma.sync, at "
                  "the chip's tensor_core.warp_mma_rate)")
          .integer("query_block", &T::queryBlock, optional("128"), between(1, 4096),
                   "query rows per thread block; a sequence's rows per KV head are padded to whole blocks")
          .integer("kv_block", &T::kvBlock, optional("64"), between(1, 65536),
                   "KV tokens per iteration of a thread block; a block's KV is padded to whole blocks")
          .integer("blocks_per_unit", &T::blocksPerUnit, optional("1"), between(1, 64),
                   "thread blocks resident on one SM at once (occupancy)")
          .optionalChild("split_kv", &T::splitKv, SplitKvConfig::schema(),
                         "flash-decoding for decode (absent: decode never splits)");
  return s;
}

bool operator==(const SplitKvConfig& a, const SplitKvConfig& b) {
  return a.queryBlock == b.queryBlock && a.kvBlock == b.kvBlock && a.maxSplits == b.maxSplits &&
         a.blocksPerUnit == b.blocksPerUnit && a.fill == b.fill && a.minEfficiency == b.minEfficiency;
}

bool operator==(const AttentionKernelConfig& a, const AttentionKernelConfig& b) {
  return a.name == b.name && a.mma == b.mma && a.queryBlock == b.queryBlock && a.kvBlock == b.kvBlock &&
         a.blocksPerUnit == b.blocksPerUnit && a.splitKv == b.splitKv;
}

int AttentionKernelConfig::splits(uint64_t blocks, int units, uint64_t kvBlocks) const {
  if (!splitKv || blocks == 0 || units < 1 || kvBlocks < 2) return 1;
  const SplitKvConfig& k = *splitKv;
  units *= static_cast<int>(k.blocksPerUnit);
  if (static_cast<double>(blocks) >= k.fill * units) return 1;
  const uint64_t most =
      std::min<uint64_t>({static_cast<uint64_t>(k.maxSplits), static_cast<uint64_t>(units), kvBlocks});
  using planning::ceilDiv;
  // A split count is eligible only when it changes the KV blocks per split (more splits with the
  // same blocks each would only add empty blocks).
  const auto eligible = [&](uint64_t s) { return s == 1 || ceilDiv(kvBlocks, s) != ceilDiv(kvBlocks, s - 1); };
  std::vector<double> efficiency(most + 1, 0.0);
  double best = 0.0;
  for (uint64_t s = 1; s <= most; ++s) {
    if (!eligible(s)) continue;
    const double waves = static_cast<double>(blocks * s) / units;
    efficiency[s] = waves / std::ceil(waves);
    best = std::max(best, efficiency[s]);
  }
  for (uint64_t s = 1; s <= most; ++s) {
    if (eligible(s) && efficiency[s] >= k.minEfficiency * best) return static_cast<int>(s);
  }
  return 1;
}

}  // namespace scoville::workload
