#pragma once
// What a transaction means, without SystemC: the op kinds, LLM phases, layer blocks and GEMM shapes
// that the pure-C++ planner (workloads/) produces and OpExtension (tlm/OpExtension.h) carries.

#include <cstddef>
#include <cstdint>

#include "tlm/Precision.h"

namespace scoville::tlm {

/// What a transaction asks its target to do.
enum class OpKind {
  kRead,      ///< memory read of `bytes` at the payload address (weights, activations)
  kWrite,     ///< memory write of `bytes` at the payload address
  kKvRead,    ///< KV-cache read (a memory read that memories account apart from weights)
  kKvAppend,  ///< KV-cache write of newly produced keys and values
  kGemm,      ///< matrix multiply `count` x (M x K) * (K x N) on a tensor core
  kVector,    ///< `elementOps` element operations (norm, softmax, activation) on a vector unit
  kSend,      ///< move `bytes` from chip `srcChip` to chip `dstChip` over the switch fabric
  kLaunch,    ///< start one kernel on the chip's stream (its command processor)
};

/// Stable name of an op kind, for statistics and messages.
const char* opKindName(OpKind kind);

/// Memory ops that move data into memory (kWrite, kKvAppend) and out of it (kRead, kKvRead).
inline bool isMemoryWrite(OpKind kind) {
  return kind == OpKind::kWrite || kind == OpKind::kKvAppend;
}
inline bool isMemoryRead(OpKind kind) {
  return kind == OpKind::kRead || kind == OpKind::kKvRead;
}

/// The phase of LLM serving a transaction belongs to. Not a tlm_phase.
enum class LlmPhase { kPrefill, kDecode, kCommunication };

/// The kind of layer (block of the model) a transaction works for, for energy breakdowns.
enum class OpBlock {
  kEmbedding,
  kAttention,  ///< projections, attention and its KV traffic, the layer's norms
  kDenseFfn,
  kMoe,  ///< router, routed and shared experts, dispatch and combine
  kLmHead,
  kOther,  ///< collectives, pipeline hand-offs, KV transfers and swaps (and waking gated arrays)
};
inline constexpr std::size_t kOpBlocks = 6;
const char* opBlockName(OpBlock block);

/// Shape of a (batched) GEMM: `count` independent (M x K) * (K x N) products.
struct GemmShape {
  uint64_t m = 0;
  uint64_t n = 0;
  uint64_t k = 0;
  uint64_t count = 1;

  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(count);
  }
};

}  // namespace scoville::tlm
