#include "hw/dram/AddressDecoder.h"

#include "hw/dram/MemoryControllerConfig.h"

namespace scoville::hw {

const std::vector<std::pair<std::string, AddressMapping>>& addressMappingNames() {
  static const std::vector<std::pair<std::string, AddressMapping>> kNames{
      {"bank_group_interleaved", AddressMapping::kBankGroupInterleaved},
      {"bank_interleaved", AddressMapping::kBankInterleaved},
      {"bank_sequential", AddressMapping::kBankSequential},
  };
  return kNames;
}

void splitIntoSegments(const MemoryControllerConfig& config, uint64_t address, uint64_t bytes, bool write,
                       std::vector<InterleavedSegment>& out) {
  splitIntoSegments(config.channels, static_cast<uint64_t>(config.interleaveBytes), address, bytes, write, out);
}

int log2Exact(uint64_t v) {
  if (v == 0 || (v & (v - 1)) != 0) return -1;
  int shift = 0;
  while ((uint64_t{1} << shift) < v) ++shift;
  return shift;
}

AddressDecoder::AddressDecoder(const MemoryControllerConfig& config)
    : m_mapping(config.addressMapping),
      m_bankCount(static_cast<uint64_t>(config.banks())),
      m_groupCount(static_cast<uint64_t>(config.bankGroups)),
      m_banksPerGroup(static_cast<uint64_t>(config.banksPerGroup)),
      m_rowBytes(static_cast<uint64_t>(config.rowBytes)),
      m_rowsPerBank(std::max<uint64_t>(
          1, static_cast<uint64_t>(config.capacityBytes / config.channels / config.banks() / config.rowBytes))) {
  m_bankShift = log2Exact(m_bankCount);
  m_bankMask = m_bankCount - 1;
  m_rowShift = log2Exact(m_rowBytes);
  m_groupsPowerOfTwo = log2Exact(m_groupCount) >= 0;
}

}  // namespace scoville::hw
