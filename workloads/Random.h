#pragma once
// Deterministic random numbers for the workload models (routing, request lengths, arrivals):
// every step is specified to the bit, independent of the platform and the standard library (no
// std:: distribution is used anywhere a seed must reproduce a report).

#include <array>
#include <cstdint>

namespace scoville::workload {

/// One step of splitmix64 (Steele, Lea, Flood): advances `state` and returns its mixed output.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// A well-mixed function of `value` (one splitmix64 step from it), for deriving stream keys.
inline uint64_t mixBits(uint64_t value) {
  return splitmix64(value);
}

/// The 128-bit product a * b: returns the high word and stores the low word in `low`.
inline uint64_t multiplyWide(uint64_t a, uint64_t b, uint64_t& low) {
#ifdef __SIZEOF_INT128__
  __extension__ typedef unsigned __int128 Wide;
  const Wide product = static_cast<Wide>(a) * b;
  low = static_cast<uint64_t>(product);
  return static_cast<uint64_t>(product >> 64);
#else
  const uint64_t aLow = a & 0xffffffffu, aHigh = a >> 32, bLow = b & 0xffffffffu, bHigh = b >> 32;
  const uint64_t lowLow = aLow * bLow, lowHigh = aLow * bHigh, highLow = aHigh * bLow;
  const uint64_t middle = (lowLow >> 32) + (lowHigh & 0xffffffffu) + (highLow & 0xffffffffu);
  low = (middle << 32) | (lowLow & 0xffffffffu);
  return aHigh * bHigh + (lowHigh >> 32) + (highLow >> 32) + (middle >> 32);
#endif
}

/// xoshiro256** (Blackman, Vigna) seeded from splitmix64, with Lemire's unbiased mapping to ranges.
class Rng {
 public:
  explicit Rng(uint64_t key) {
    for (uint64_t& word : m_state) word = splitmix64(key);
  }

  uint64_t next() {
    const uint64_t result = rotateLeft(m_state[1] * 5, 7) * 9;
    const uint64_t t = m_state[1] << 17;
    m_state[2] ^= m_state[0];
    m_state[3] ^= m_state[1];
    m_state[1] ^= m_state[2];
    m_state[0] ^= m_state[3];
    m_state[2] ^= t;
    m_state[3] = rotateLeft(m_state[3], 45);
    return result;
  }

  /// Uniform in [0, n) for n >= 1 (Lemire 2019, "Fast random integer generation in an interval").
  uint64_t below(uint64_t n) {
    uint64_t low = 0;
    uint64_t high = multiplyWide(next(), n, low);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) high = multiplyWide(next(), n, low);
    }
    return high;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t rotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::array<uint64_t, 4> m_state{};
};

}  // namespace scoville::workload
