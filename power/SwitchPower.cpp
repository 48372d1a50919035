#include "power/SwitchPower.h"

#include "tlm/Time.h"

namespace scoville::power {

void SwitchPower::onActivity(const tlm::ActivityEvent& e) {
  double joules = 0.0;
  if (e.activity == tlm::Activity::kSwitchBytes) {
    joules = e.amount * m_energy.jPerByte;
    m_bytesJ += joules;
  } else if (e.activity == tlm::Activity::kSwitchPackets) {
    joules = e.amount * m_energy.jPerPacket;
    m_packetsJ += joules;
  }
  m_timeline.add(joules, static_cast<std::size_t>(tlm::LlmPhase::kCommunication), tlm::seconds(e.start),
                 tlm::seconds(e.time));
}

}  // namespace scoville::power
