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

#include "hw/Interleave.h"

namespace scoville::hw {

struct MemoryControllerConfig;

/// How a channel-local page maps to a bank, bank group and row (see above).
enum class AddressMapping { kBankGroupInterleaved, kBankInterleaved, kBankSequential };

/// The mappings by their configuration names.
const std::vector<std::pair<std::string, AddressMapping>>& addressMappingNames();

/// The segments of `config`'s channel interleave (splitIntoSegments over its channels and granule).
void splitIntoSegments(const MemoryControllerConfig& config, uint64_t address, uint64_t bytes, bool write,
                       std::vector<InterleavedSegment>& out);

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
