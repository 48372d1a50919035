#pragma once
// Address interleaving over channels or banks: granule g of `granule` bytes lives on channel
// g mod channels. The HBM controller interleaves its channels this way (hw/dram/AddressDecoder.h)
// and the SRAM its banks (hw/Sram.h).

#include <algorithm>
#include <cstdint>
#include <vector>

namespace scoville::hw {

/// A contiguous range of one channel's (or bank's) local address space.
struct InterleavedSegment {
  int channel = 0;
  uint64_t localAddress = 0;
  uint64_t bytes = 0;
  bool write = false;
};

/// Calls `visit(segment)` for each per-channel segment of [address, address + bytes) of an
/// interleaved address space (granule g of size `granule` lives on channel g mod channels), in
/// channel order from the first granule's channel. Divisions are done once, not per channel.
template <typename Visit>
void forEachSegment(int channelCount, uint64_t granule, uint64_t address, uint64_t bytes, bool write, Visit&& visit) {
  if (bytes == 0) return;
  const auto channels = static_cast<uint64_t>(channelCount);
  const uint64_t firstGranule = address / granule;
  const uint64_t lastGranule = (address + bytes - 1) / granule;
  const uint64_t granules = lastGranule - firstGranule + 1;
  // Channel offset o holds granules firstGranule + o + j * channels, j = 0 .. count(o) - 1: the
  // first `extra` offsets one more than the others.
  const uint64_t perChannel = granules / channels;
  const uint64_t extra = granules % channels;
  uint64_t channel = firstGranule % channels;
  uint64_t row = firstGranule / channels;  // the granule's index within its channel
  const uint64_t end = address + bytes;
  for (uint64_t offset = 0; offset < std::min(granules, channels); ++offset) {
    const uint64_t g = firstGranule + offset;
    const uint64_t count = perChannel + (offset < extra ? 1 : 0);
    const uint64_t lastOfChannel = g + (count - 1) * channels;
    const uint64_t begin = std::max(address, g * granule);
    const uint64_t stop = std::min(end, (lastOfChannel + 1) * granule);
    const uint64_t localBegin = row * granule + (begin - g * granule);
    const uint64_t segmentBytes = (count - 1) * granule + (stop - lastOfChannel * granule) - (begin - g * granule);
    visit(InterleavedSegment{static_cast<int>(channel), localBegin, segmentBytes, write});
    if (++channel == channels) {
      channel = 0;
      ++row;
    }
  }
}

/// The segments of forEachSegment, collected into `out` (cleared first).
inline void splitIntoSegments(int channels, uint64_t granule, uint64_t address, uint64_t bytes, bool write,
                              std::vector<InterleavedSegment>& out) {
  out.clear();
  forEachSegment(channels, granule, address, bytes, write, [&out](const InterleavedSegment& s) { out.push_back(s); });
}
}  // namespace scoville::hw
