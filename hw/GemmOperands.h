#pragma once
// Functional operands of a kGemm transaction, for RTL co-simulation (docs/cosim.md). Scoville's
// payloads are timing-only; a GEMM payload that carries this extension also asks its tensor core
// for the product, so an RTL block and the TLM model can be compared value for value.
//
// Number format: the arrays' integer datapath, signed 8-bit operands and 32-bit two's-complement
// sums that wrap around (the transaction's precision still sets the timing, through the MAC rate).
// Layout, row-major per product, products one after another (shape.count of them):
//   a  count x M x K   set by the initiator
//   b  count x K x N   set by the initiator
//   c  count x M x N   written by the target (resized by it)

#include <cstdint>
#include <tlm>
#include <vector>

#include "tlm/OpExtension.h"

namespace scoville::hw {

class GemmOperands : public ::tlm::tlm_extension<GemmOperands> {
 public:
  std::vector<int8_t> a;
  std::vector<int8_t> b;
  std::vector<int32_t> c;

  ::tlm::tlm_extension_base* clone() const override { return new GemmOperands(*this); }
  void copy_from(const ::tlm::tlm_extension_base& other) override { *this = static_cast<const GemmOperands&>(other); }

  /// True when a and b have the sizes `shape` needs.
  bool fits(const tlm::GemmShape& shape) const;
  /// Fills a and b for `shape` with a reproducible stream of values in [-128, 127] drawn from `seed`.
  void fill(const tlm::GemmShape& shape, uint64_t seed);
};

/// The reference product: c = a x b for every product of `shape` (c resized to count x M x N).
/// Throws std::invalid_argument when a or b do not fit the shape.
void referenceProduct(const tlm::GemmShape& shape, GemmOperands& operands);

}  // namespace scoville::hw
