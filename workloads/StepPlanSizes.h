#pragma once
// Sizes the step planner's two halves share (StepPlanLayout.cpp lays the weights out, StepPlan.cpp
// plans the steps; PlatformDecode.cpp aligns the decode step's KV regions the same way). Internal
// to scoville_workload.

#include <cmath>
#include <cstdint>

#include "tlm/Precision.h"

namespace scoville::workload::planning {

inline constexpr uint64_t kAlignment = 4096;       ///< weight tensors start on 4 KiB boundaries
inline constexpr uint64_t kTileColumnAlign = 128;  ///< weight tiles hold whole multiples of 128 columns
inline constexpr uint64_t kNoExpert = ~uint64_t{0};

inline uint64_t u(int v) {
  return static_cast<uint64_t>(v);
}

/// Bytes of `elements` elements of `bitsPerElement` bits, rounded up.
inline uint64_t bytesOf(uint64_t elements, double bitsPerElement) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(elements) * bitsPerElement / 8.0));
}

inline uint64_t bytesOf(uint64_t elements, tlm::Precision p) {
  return bytesOf(elements, tlm::bitsPerElement(p));
}

/// a / b rounded up (b > 0).
inline uint64_t ceilDiv(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

/// `n` rounded up to a whole number of `step` (step > 0): rows padded to whole tiles, bytes to
/// whole pages.
inline uint64_t roundUp(uint64_t n, uint64_t step) {
  return ceilDiv(n, step) * step;
}

/// `bytes` rounded up to kAlignment.
inline uint64_t aligned(uint64_t bytes) {
  return roundUp(bytes, kAlignment);
}

}  // namespace scoville::workload::planning
