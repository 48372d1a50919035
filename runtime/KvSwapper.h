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
// The copy is a configuration of the chip's copy engine (hw::CopyEngine), runs unchunked: swap-
// out is kMemoryThenLink (run after run read from HBM, each handed to the host link as soon as it
// is read, the link serialising them at its bandwidth while the next run is read); swap-in is
// kLinkThenMemory (every run requested from the host at once, the link serialising the returning
// data, each run written into HBM once it has landed). A copy ends when its last byte is in place.

#include <cstdint>
#include <string>
#include <systemc>

#include "hw/dma/CopyEngine.h"
#include "hw/kv/KvBlockAllocator.h"
#include "tlm/InitiatorPort.h"
#include "tlm/TimingMode.h"
#include "workloads/ServingScheduler.h"

namespace scoville::runtime {

using workload::KvSwap;
using workload::ServingScheduler;

class KvSwapper : public sc_core::sc_module {
  hw::CopyEngine m_engine;  // first: the public sides below are its ports

 public:
  /// HBM side: bind hbm.socket to the chip's socket (either timing mode).
  tlm::InitiatorPort& hbm;
  /// Host side: bind to the chip's host link (loosely timed in both modes, as the link).
  hw::CopyEngine::LinkSocket& host;

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
  int m_chip;
  uint32_t m_layers;
  uint64_t m_layerBlockBytes;
  uint64_t m_kvBase;
  hw::Copy m_copy;  // the runs of the last copy (memory: HBM, link: host memory)
  std::string m_error;
};

}  // namespace scoville::runtime
