#include "workloads/StepPlanAttention.h"

#include <algorithm>

#include "workloads/StepPlanSizes.h"

namespace scoville::workload {

namespace {

using planning::ceilDiv;

/// KV blocks of `block` tokens covering the attended tokens [first, last): a block's iterations.
uint64_t kvIterations(uint64_t first, uint64_t last, uint64_t block) {
  return last > first ? ceilDiv(last, block) - first / block : 0;
}

/// The first KV token a decoding sequence's queries attend to: the last window + queries - 1
/// tokens under a sliding window, else all.
uint64_t decodeFirstToken(const StepSequence& s, uint64_t window) {
  const uint64_t last = s.context + s.tokens;
  const uint64_t span = window + s.tokens - 1;
  return window > 0 && last > span ? last - span : 0;
}

}  // namespace

KernelAttentionLayout layOutKernelAttention(const AttentionKernelConfig& k, const std::vector<StepSequence>& sequences,
                                            uint64_t kvHeads, uint64_t group, uint64_t headDim, uint64_t window,
                                            bool sinks, int units) {
  KernelAttentionLayout out;
  const double sinkLogits = sinks ? 1.0 : 0.0;
  // The split decision: a pure-decode step, its unsplit grid counted in the split kernel's rows.
  bool decoding = false, prefilling = false;
  for (const StepSequence& s : sequences) {
    decoding = decoding || s.decodes();
    prefilling = prefilling || (!s.decodes() && s.tokens > 0);
  }
  const bool pureDecode = decoding && !prefilling;
  if (pureDecode && k.splitKv) {
    const auto splitRows = static_cast<uint64_t>(k.splitKv->queryBlock);
    uint64_t blocks = 0, longest = 0;
    for (const StepSequence& s : sequences) {
      blocks += kvHeads * ceilDiv(group * s.tokens, splitRows);
      longest = std::max(longest, s.context + s.tokens - decodeFirstToken(s, window));
    }
    out.splits = k.splits(blocks, units, ceilDiv(longest, static_cast<uint64_t>(k.splitKv->kvBlock)));
  }
  const bool split = out.splits > 1;
  const auto qBlock = static_cast<uint64_t>(split ? k.splitKv->queryBlock : k.queryBlock);
  const auto kvBlock = static_cast<uint64_t>(split ? k.splitKv->kvBlock : k.kvBlock);
  out.grid = std::make_shared<tlm::WorkGrid>();
  tlm::WorkGrid& grid = *out.grid;
  grid.slotsPerUnit = static_cast<int>(split ? k.splitKv->blocksPerUnit : k.blocksPerUnit);

  // Decode: per sequence its row blocks and KV blocks; GEMMs of equal padded rows issued as one.
  std::vector<std::pair<uint64_t, uint64_t>> decodeBlocks;  // row blocks, KV blocks
  for (const StepSequence& s : sequences) {
    if (!s.decodes()) continue;
    const uint64_t rows = group * s.tokens;
    const uint64_t rowBlocks = ceilDiv(rows, qBlock);
    const uint64_t kvBlocks = kvIterations(decodeFirstToken(s, window), s.context + s.tokens, kvBlock);
    const uint64_t paddedRows = rowBlocks * qBlock;
    out.decodeSpans.add(paddedRows, kvBlocks * kvBlock);
    out.decodeScores += static_cast<double>(paddedRows * kvBlocks * kvBlock * kvHeads) +
                        sinkLogits * static_cast<double>(rows * kvHeads);
    out.decodeRows += static_cast<double>(rows * kvHeads);
    decodeBlocks.emplace_back(rowBlocks, kvBlocks);
  }
  // FlashAttention's split grid is (row block, split, sequence x KV head), its unsplit grid (row
  // block, sequence, head): heads outermost. A split takes its share of the KV blocks (the last
  // ones fewer, none when the blocks run out).
  if (split) {
    const auto splits = static_cast<uint64_t>(out.splits);
    for (const auto& [rowBlocks, kvBlocks] : decodeBlocks) {
      const uint64_t per = ceilDiv(kvBlocks, splits);
      for (uint64_t h = 0; h < kvHeads; ++h) {
        for (uint64_t sp = 0; sp < splits; ++sp) {
          const uint64_t begin = per * sp;
          grid.add(static_cast<uint32_t>(rowBlocks),
                   static_cast<uint32_t>(begin >= kvBlocks ? 0 : std::min(per, kvBlocks - begin)));
        }
      }
    }
  } else {
    for (uint64_t h = 0; h < kvHeads; ++h) {
      for (const auto& [rowBlocks, kvBlocks] : decodeBlocks) {
        grid.add(static_cast<uint32_t>(rowBlocks), static_cast<uint32_t>(kvBlocks));
      }
    }
  }

  // Prefill: every query head's chunk in row blocks; block j sees the causal KV of its last row
  // (from its first row's window start).
  const uint64_t heads = group * kvHeads;
  std::vector<uint32_t> rowBlockIterations;  // every prefilling sequence's row blocks, in order
  for (const StepSequence& s : sequences) {
    if (s.decodes()) continue;
    uint64_t iterations = 0;
    for (uint64_t j = 0; j * qBlock < s.tokens; ++j) {
      const uint64_t last = s.context + std::min(s.tokens, (j + 1) * qBlock);
      const uint64_t firstQuery = s.context + j * qBlock + 1;  // 1-based position
      const uint64_t first = window > 0 && firstQuery > window ? firstQuery - window : 0;
      rowBlockIterations.push_back(static_cast<uint32_t>(kvIterations(first, last, kvBlock)));
      iterations += rowBlockIterations.back();
    }
    out.prefillGemms.push_back(tlm::GemmShape{qBlock, iterations * kvBlock, headDim, heads});  // scores = q K^T
    out.prefillGemms.push_back(tlm::GemmShape{qBlock, headDim, iterations * kvBlock, heads});  // out = p V
    out.prefillScores +=
        static_cast<double>(qBlock * iterations * kvBlock * heads) + sinkLogits * static_cast<double>(s.tokens * heads);
  }
  for (uint64_t h = 0; h < heads && !rowBlockIterations.empty(); ++h) {
    for (const uint32_t iterations : rowBlockIterations) grid.add(1, iterations);
  }
  return out;
}

}  // namespace scoville::workload
