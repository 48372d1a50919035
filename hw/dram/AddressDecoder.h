#pragma once
// Address decoding of an HBM controller, in two steps.
//
// Across channels: granule g of `interleave` bytes lives on channel g mod channels
// (forEachSegment cuts a request into one contiguous channel-local segment per channel it touches).
//
// Inside a channel, a named mapping places the channel-local page (a row-sized block, page =
// local address / row size) in a bank and a row; `banks` = bank groups x banks per group:
// - bank_group_interleaved (default): bank = page mod banks, group = bank mod groups, row = page /
//   banks. Consecutive pages rotate over the banks and, one after another, over the bank groups,
//   so a stream activates at tRRD_S and hides activation behind data (the layout DRAMSys calls
//   bank-group interleaving, and the one the stream closed forms in DramChannel assume).
// - bank_interleaved: bank = page mod banks, group = bank / banks_per_group, row = page / banks.
//   Consecutive pages stay in one bank group for banks_per_group pages, so a stream activates at
//   tRRD_L within a group.
// - bank_sequential: row = page mod rows, bank = (page / rows) mod banks, rows = the channel's
//   capacity / (banks x row size). A stream stays in one bank, so every page is a row conflict and
//   a stream runs at one page per tRC (the worst layout; a check on the timing checker).

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace scoville::hw {

struct MemoryControllerConfig;

/// How a channel-local page maps to a bank, bank group and row (see above).
enum class AddressMapping { kBankGroupInterleaved, kBankInterleaved, kBankSequential };

/// The mappings by their configuration names.
const std::vector<std::pair<std::string, AddressMapping>>& addressMappingNames();

/// A contiguous range of one channel's local address space.
struct DramSegment {
  int channel = 0;
  uint64_t localAddress = 0;
  uint64_t bytes = 0;
  bool write = false;
};

/// Calls `visit(segment)` for each per-channel segment of [address, address + bytes) of the
/// controller's address space (granule g of size `granule` lives on channel g mod channels), in
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
    visit(DramSegment{static_cast<int>(channel), localBegin, segmentBytes, write});
    if (++channel == channels) {
      channel = 0;
      ++row;
    }
  }
}

/// The segments of forEachSegment, collected into `out` (cleared first).
inline void splitIntoSegments(int channels, uint64_t granule, uint64_t address, uint64_t bytes, bool write,
                              std::vector<DramSegment>& out) {
  out.clear();
  forEachSegment(channels, granule, address, bytes, write, [&out](const DramSegment& s) { out.push_back(s); });
}
void splitIntoSegments(const MemoryControllerConfig& config, uint64_t address, uint64_t bytes, bool write,
                       std::vector<DramSegment>& out);

/// A channel's page-to-bank mapping. Shifts and masks stand in for divisions when the sizes are
/// powers of two: these run for every page of every segment.
class AddressDecoder {
 public:
  /// `config` describes the channel as timed (a lockstep group counts as one channel).
  explicit AddressDecoder(const MemoryControllerConfig& config);

  AddressMapping mapping() const { return m_mapping; }
  /// True for bank_group_interleaved: consecutive pages take consecutive banks of alternating
  /// bank groups (what DramChannel's stream closed forms assume).
  bool rotatesGroups() const { return m_mapping == AddressMapping::kBankGroupInterleaved; }

  uint64_t pageOf(uint64_t localAddress) const {
    return m_rowShift >= 0 ? localAddress >> m_rowShift : localAddress / m_rowBytes;
  }
  uint64_t bankOf(uint64_t page) const {
    if (m_mapping == AddressMapping::kBankSequential) return (page / m_rowsPerBank) % m_bankCount;
    return m_bankShift >= 0 ? page & m_bankMask : page % m_bankCount;
  }
  int64_t rowOf(uint64_t page) const {
    if (m_mapping == AddressMapping::kBankSequential) return static_cast<int64_t>(page % m_rowsPerBank);
    return static_cast<int64_t>(m_bankShift >= 0 ? page >> m_bankShift : page / m_bankCount);
  }
  int groupOf(uint64_t bank) const {
    if (m_mapping == AddressMapping::kBankInterleaved) return static_cast<int>(bank / m_banksPerGroup);
    return static_cast<int>(m_groupsPowerOfTwo ? bank & (m_groupCount - 1) : bank % m_groupCount);
  }
  uint64_t banks() const { return m_bankCount; }
  uint64_t rowBytes() const { return m_rowBytes; }

 private:
  AddressMapping m_mapping;
  uint64_t m_bankCount;
  uint64_t m_groupCount;
  uint64_t m_banksPerGroup;
  uint64_t m_rowBytes;
  uint64_t m_rowsPerBank;
  bool m_groupsPowerOfTwo = false;
  uint64_t m_bankMask = 0;
  int m_bankShift = -1;  ///< log2(banks), or -1 when not a power of two
  int m_rowShift = -1;   ///< log2(row bytes), or -1
};

/// log2(v) when v is a power of two, else -1.
int log2Exact(uint64_t v);

}  // namespace scoville::hw
