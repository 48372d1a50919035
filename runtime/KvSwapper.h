#pragma once
// A chip's KV copy engine for swap preemption in serving: moves the chip's slice of a request's
// KV blocks between its HBM and its share of host memory, as transactions on the chip (HBM reads
// and writes through the chip's interconnect) and on the chip's host link. Time comes from those
// modules; nothing here computes a duration.
//
// The chip's slice of a block is `layers` layer slices of `layerBlockBytes` each (its tensor-
// parallel heads, its pipeline stage's layers), at the addresses KvBlockAllocator::address gives past the chip's KV
// base in HBM for the block on its tier (the layout the step's KV reads use). Per layer and block one run; runs
// continuing each other in both HBM and host memory merge into one transaction.
//
// Pipelining, as a DMA engine streams: swap-out reads run after run from HBM and hands each run
// to the host link as soon as it is read (the link serialises them at its bandwidth while the
// next run is read); swap-in requests every run from the host at once (the link serialises the
// returning data) and writes each run into HBM once it has landed. A copy ends when its last
// byte is in place.

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "tlm/InitiatorPort.h"
#include "tlm/PayloadPool.h"
#include "tlm/TimingMode.h"
#include "workloads/ServingScheduler.h"

namespace scoville::runtime {

using workload::KvSwap;
using workload::ServingScheduler;

class KvSwapper : public sc_core::sc_module {
 public:
  /// HBM side: bind hbm.socket to the chip's socket (either timing mode).
  tlm::InitiatorPort hbm;
  /// Host side: bind to the chip's host link (loosely timed in both modes, as the link).
  tlm_utils::simple_initiator_socket<KvSwapper> host;

  /// `kvBase`: where the chip's KV region starts in its HBM (the planner's kvBase()).
  KvSwapper(const sc_core::sc_module_name& name, int chip, uint32_t layers, uint64_t layerBlockBytes, uint64_t kvBase,
            tlm::TimingMode mode);
  KvSwapper(const KvSwapper&) = delete;
  KvSwapper& operator=(const KvSwapper&) = delete;

  /// From an SC_THREAD: performs this chip's part of `swap` (blocks laid out by `kv`) and returns
  /// once it is in place; false, with error() set, when a memory or the link refused a transfer.
  bool copy(const hw::KvBlockAllocator& kv, const KvSwap& swap);
  /// Bytes this chip moves for `blocks` blocks.
  uint64_t bytesFor(uint64_t blocks) const { return blocks * m_layers * m_layerBlockBytes; }
  const std::string& error() const { return m_error; }

 private:
  struct Run {
    uint64_t hbmAddress;
    uint64_t hostAddress;
    uint64_t bytes;
  };

  /// Issues one transfer; `delay` is its annotated arrival and comes back as its completion.
  bool transfer(bool onHbm, bool write, uint64_t address, uint64_t bytes, uint64_t request, sc_core::sc_time& delay);

  int m_chip;
  uint32_t m_layers;
  uint64_t m_layerBlockBytes;
  uint64_t m_kvBase;
  tlm::PayloadPool m_pool;
  std::vector<Run> m_runs;
  std::string m_error;
};

}  // namespace scoville::runtime
