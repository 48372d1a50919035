#include "hw/GemmOperands.h"

#include <stdexcept>

namespace scoville::hw {

namespace {

/// splitmix64: a small, well-mixed stream; operands only need to be reproducible and varied.
uint64_t nextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void fillBytes(std::vector<int8_t>& out, std::size_t size, uint64_t& state) {
  out.resize(size);
  std::size_t i = 0;
  while (i < size) {
    uint64_t word = nextRandom(state);
    for (int byte = 0; byte < 8 && i < size; ++byte, word >>= 8) {
      out[i++] = static_cast<int8_t>(static_cast<uint8_t>(word & 0xffU));
    }
  }
}

}  // namespace

bool GemmOperands::fits(const tlm::GemmShape& shape) const {
  return a.size() == shape.count * shape.m * shape.k && b.size() == shape.count * shape.k * shape.n;
}

void GemmOperands::fill(const tlm::GemmShape& shape, uint64_t seed) {
  uint64_t state = seed;
  fillBytes(a, shape.count * shape.m * shape.k, state);
  fillBytes(b, shape.count * shape.k * shape.n, state);
}

void referenceProduct(const tlm::GemmShape& shape, GemmOperands& operands) {
  if (!operands.fits(shape)) throw std::invalid_argument("GEMM operands do not fit the transaction's shape");
  const uint64_t m = shape.m;
  const uint64_t n = shape.n;
  const uint64_t k = shape.k;
  // Unsigned arithmetic wraps around exactly as the 32-bit accumulators do.
  std::vector<uint32_t> sums(shape.count * m * n, 0U);
  for (uint64_t p = 0; p < shape.count; ++p) {
    const int8_t* a = operands.a.data() + p * m * k;
    const int8_t* b = operands.b.data() + p * k * n;
    uint32_t* c = sums.data() + p * m * n;
    for (uint64_t row = 0; row < m; ++row) {
      for (uint64_t i = 0; i < k; ++i) {
        const auto ai = static_cast<int32_t>(a[row * k + i]);
        if (ai == 0) continue;
        for (uint64_t col = 0; col < n; ++col) {
          c[row * n + col] += static_cast<uint32_t>(ai * static_cast<int32_t>(b[i * n + col]));
        }
      }
    }
  }
  operands.c.resize(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i) operands.c[i] = static_cast<int32_t>(sums[i]);
}

}  // namespace scoville::hw
