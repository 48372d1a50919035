#pragma once
// KV-cache manager: owns the paged block allocator of one chip's KV cache and turns KV
// operations into memory traffic on the tier each block lives on.
//
// Data path (LT, b_transport): a kKvAppend or kKvRead payload names a request, a layer and a
// token range. The range is cut at block boundaries; each piece is one layer's slice of one block
// (address from KvBlockAllocator::address, see its layout). Pieces on the same tier that are
// adjacent in memory (consecutive slots) merge into one transaction. Each transaction is a new
// pooled kKvAppend or kKvRead payload sent to that tier's initiator socket. Transactions to one
// tier are issued back to back (each starts at the previous one's annotated completion); different
// tiers proceed in parallel from the incoming delay, and the payload completes at the latest tier.
// The incoming OpExtension::bytes is not used: sizes follow from tokens x bytes per token per layer.
//
// Control path (plain C++ calls from the scheduler): admit / append / release / swapIn allocate and
// free blocks; they move no KV data except for swap, whose block copies (read at the source tier,
// write at the destination, all layers) are issued like the data path and annotated on `delay`.
//
// Binding: the tier sockets are optional, but every tier the allocator may touch (one the policy
// may use, plus host when preemption is swap) that has capacity must be bound; end of elaboration
// reports an SC_ERROR naming the socket otherwise.

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <array>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "tlm/PayloadPool.h"
#include "tlm/stats/StatsGroup.h"

namespace scoville::hw {

class KvCacheManager : public sc_core::sc_module {
 public:
  using TierSocket = tlm_utils::simple_initiator_socket_optional<KvCacheManager>;

  /// Accepts kKvAppend and kKvRead (requestId, layer, tokenBegin, tokenCount). Responses: command
  /// error for other kinds, generic error for a request that is not resident, address error for a
  /// layer or token range outside what the request holds, else the worst tier response.
  tlm_utils::simple_target_socket<KvCacheManager> socket;
  TierSocket toSram;
  TierSocket toLocalHbm;
  TierSocket toRemote;  ///< a remote chip's HBM, over the fabric
  TierSocket toHost;    ///< host memory, over the host link

  /// `capacities`: bytes each tier gives the KV cache. Throws std::invalid_argument for an unknown
  /// placement policy or a zero-sized block.
  KvCacheManager(const sc_core::sc_module_name& name, const KvCacheConfig& config, const KvModelShape& shape,
                 const KvTierCapacities& capacities);
  KvCacheManager(const KvCacheManager&) = delete;
  KvCacheManager& operator=(const KvCacheManager&) = delete;

  /// See KvBlockAllocator::admit (never preempts, so moves no data).
  KvAllocation admit(uint64_t requestId, uint64_t promptTokens, uint64_t prefixId = 0, uint64_t prefixTokens = 0);
  /// See KvBlockAllocator::append; swap-out copies of the victims are issued and added to `delay`.
  KvAllocation append(uint64_t requestId, uint64_t tokens, sc_core::sc_time& delay);
  /// See KvBlockAllocator::release.
  void release(uint64_t requestId);
  /// See KvBlockAllocator::swapIn; the copies back from host are issued and added to `delay`.
  bool swapIn(uint64_t requestId, sc_core::sc_time& delay);

  const KvBlockAllocator& allocator() const { return m_allocator; }
  const stats::Group& stats() const { return m_stats; }

 private:
  /// One memory transaction to issue: `bytes` at `address` on `tier`.
  struct Run {
    KvTier tier;
    bool write;
    uint64_t address;
    uint64_t bytes;
  };

  void bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void end_of_elaboration() override;
  TierSocket& tierSocket(KvTier tier);
  /// Appends a run, merging it into the previous one when it continues it on the same tier.
  static void addRun(std::vector<Run>& runs, const Run& run);
  /// Issues `runs` (see the timing above) starting at `delay`; returns the worst response.
  ::tlm::tlm_response_status issue(const std::vector<Run>& runs, const tlm::OpExtension& context,
                                   sc_core::sc_time& delay);
  void copyBlocks(uint64_t requestId, const std::vector<KvBlockMove>& moves, sc_core::sc_time& delay);
  /// Closes the occupancy interval ending now; call before every allocator change.
  void accrueOccupancy();
  double usedBytes(KvTier tier) const;

  KvBlockAllocator m_allocator;
  tlm::PayloadPool m_pool;
  std::vector<Run> m_runs;
  std::array<double, kKvTierCount> m_occupancyIntegral{};  ///< byte-seconds
  sc_core::sc_time m_occupancySince = sc_core::SC_ZERO_TIME;

  stats::Group m_stats;
  stats::Counter& m_appends;
  stats::Counter& m_reads;
  std::array<stats::Counter*, kKvTierCount> m_bytesRead{};
  std::array<stats::Counter*, kKvTierCount> m_bytesWritten{};
  std::array<stats::Counter*, kKvTierCount> m_transactions{};
};

}  // namespace scoville::hw
