#pragma once
// Command processor: the chip's front end that starts kernels. A kLaunch transaction is one
// kernel's launch on the chip's stream; its response comes `kernel_launch` after the later of its
// arrival and the previous launch's response (one stream: launches follow one another). The load
// stream (runtime/StepDriver.h) sends one when a kernel's predecessor has ended and starts the
// kernel's loads on the response, so the gap sits between the kernels as on a GPU stream.

#include <systemc>

#include "hw/CommandProcessorConfig.h"
#include "hw/TimedTarget.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

/// Accepts kLaunch payloads; anything else gets TLM_COMMAND_ERROR_RESPONSE.
class CommandProcessor : public TimedTarget {
 public:
  CommandProcessor(const sc_core::sc_module_name& name, const CommandProcessorConfig& config);

  const stats::Group& stats() const { return m_stats; }

 private:
  sc_core::sc_time serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) override;

  CommandProcessorConfig m_config;
  sc_core::sc_time m_busyUntil = sc_core::SC_ZERO_TIME;
  stats::Group m_stats;
  stats::Counter& m_launches;
  stats::Counter& m_launchTime;
};

}  // namespace scoville::hw
