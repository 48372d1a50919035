#pragma once
// GQA attention as an attention kernel lays it out (AttentionKernelConfig): pure arithmetic from a
// step's sequences, the layer's heads and window and the chip's SMs. The step planner turns the
// result into its attention tiles (StepPlan.cpp); the tests check it directly.

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tlm/OpTypes.h"
#include "tlm/WorkGrid.h"
#include "workloads/AttentionKernel.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {

/// Decode attention GEMMs keyed by what sets their rows (the queries per sequence: 1, or 1 + drafts
/// verified; under an attention kernel the padded rows), in first-seen order, with the spans their
/// sequences attend to summed: the GEMMs of one entry are issued as one.
struct DecodeSpans {
  boost::container::small_vector<std::pair<uint64_t, uint64_t>, 2> entries;  // key, summed span
  void add(uint64_t key, uint64_t span) {
    for (auto& e : entries) {
      if (e.first == key) {
        e.second += span;
        return;
      }
    }
    entries.emplace_back(key, span);
  }
  auto begin() const { return entries.begin(); }
  auto end() const { return entries.end(); }
};

/// The layer's attention as the kernel runs it: each thread block computes query_block rows
/// against its KV, kv_block tokens per iteration, both padded to whole blocks. Decode: the query
/// heads of a KV head (times the queries of a verifying sequence) are a block's rows,
/// FlashAttention's swap for one-token queries; a pure-decode step whose grid would leave SMs idle
/// splits each sequence's KV (flash-decoding). Prefill: each query head's chunk in blocks of rows,
/// each seeing its causal KV.
struct KernelAttentionLayout {
  int splits = 1;  ///< > 1: flash-decoding, a combine kernel merges the splits
  /// Decode GEMMs by padded rows: (rows, padded KV tokens summed over the sequences).
  DecodeSpans decodeSpans;
  std::vector<tlm::GemmShape> prefillGemms;  ///< per prefilling sequence: scores, then values
  double decodeScores = 0.0;                 ///< padded scores of the decoding sequences, sinks' logits included
  double decodeRows = 0.0;                   ///< their real query rows, over the KV heads
  double prefillScores = 0.0;                ///< padded scores of the prefilling ones, sinks' logits included
  /// The blocks' iterations in FlashAttention's launch order, which the tensor core and the vector
  /// unit schedule onto the SMs.
  std::shared_ptr<tlm::WorkGrid> grid;
};

/// `kvHeads` KV heads of `group` query heads each, `headDim` wide; `window` 0 or the layer's
/// sliding window; `sinks`: one more logit per query and head; `units`: the chip's SMs.
KernelAttentionLayout layOutKernelAttention(const AttentionKernelConfig& kernel,
                                            const std::vector<StepSequence>& sequences, uint64_t kvHeads,
                                            uint64_t group, uint64_t headDim, uint64_t window, bool sinks, int units);

}  // namespace scoville::workload
