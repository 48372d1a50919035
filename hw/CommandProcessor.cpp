#include "hw/CommandProcessor.h"

#include <algorithm>

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

CommandProcessor::CommandProcessor(const sc_core::sc_module_name& name, const CommandProcessorConfig& config)
    : TimedTarget(name),
      m_config(config),
      m_stats("command_processor", "kernel launches"),
      m_launches(m_stats.counter("launches", "", "kernels launched")),
      m_launchTime(m_stats.counter("launch_time", "s", "time between kernels spent launching them")) {}

sc_core::sc_time CommandProcessor::serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) {
  if (tlm::opOf(payload).kind != tlm::OpKind::kLaunch) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return arrival;
  }
  const sc_core::sc_time start = std::max(arrival, m_busyUntil);
  m_busyUntil = start + tlm::durationCeil(m_config.kernelLaunchS);
  m_launches.add();
  m_launchTime.add(m_config.kernelLaunchS);
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  return m_busyUntil;
}

}  // namespace scoville::hw
