#include "hw/network/SwitchPort.h"

#include <algorithm>

#include "tlm/Time.h"

namespace scoville::hw {

LinkDirection::LinkDirection(stats::Group& group, const std::string& prefix, const std::string& what)
    : m_messages(group.counter(prefix + "_messages", "", "messages " + what)),
      m_bytes(group.counter(prefix + "_bytes", "B", "payload bytes " + what)),
      m_wireBytes(group.counter(prefix + "_wire_bytes", "B", "bytes on the wire " + what + ", headers included")),
      m_packets(group.counter(prefix + "_packets", "", "packets " + what)),
      m_busyTime(group.counter(prefix + "_busy_time", "s", "time spent serialising packets " + what)),
      m_queueTime(group.counter(prefix + "_queue_time", "s",
                                "time messages " + what + " waited for the wire to be free (summed)")),
      m_stallTime(group.counter(prefix + "_stall_time", "s",
                                "time the wire was held but idle " + what + " (flow-control stalls, starvation)")) {
  group.formula(prefix + "_utilization", "", "busy time / simulated time", [this] {
    const double elapsed = sc_core::sc_time_stamp().to_seconds();
    return elapsed > 0 ? m_busyTime.value() / elapsed : 0.0;
  });
}

LinkDirection::Hold LinkDirection::hold(const sc_core::sc_time& requested, const sc_core::sc_time& start,
                                        const sc_core::sc_time& end, uint64_t payloadBytes, uint64_t wireBytes,
                                        uint64_t packets, double serialisationS) {
  Hold h;
  h.end = end;
  h.payloadBytes = static_cast<double>(payloadBytes);
  h.wireBytes = static_cast<double>(wireBytes);
  h.packets = static_cast<double>(packets);
  h.serialisationS = serialisationS;
  h.queueS = tlm::seconds(start - requested);
  h.stallS = std::max(0.0, tlm::seconds(end - start) - serialisationS);
  return h;
}

void LinkDirection::occupy(const Hold& h) {
  m_busyUntil = h.end;
  m_messages.add();
  m_bytes.add(h.payloadBytes);
  m_wireBytes.add(h.wireBytes);
  m_packets.add(h.packets);
  m_busyTime.add(h.serialisationS);
  m_queueTime.add(h.queueS);
  m_stallTime.add(h.stallS);
}

SwitchPort::SwitchPort(const sc_core::sc_module_name& name, const LinkConfig& config, int chip)
    : sc_core::sc_module(name),
      fromChip("fromChip"),
      toSwitch("toSwitch"),
      m_config(config),
      m_latency(tlm::durationCeil(config.latencyS)),
      m_chip(chip),
      m_stats(basename(), "a chip's port on the inter-chip switch and its link"),
      m_tx(m_stats, "tx", "sent from this chip toward the switch"),
      m_rx(m_stats, "rx", "delivered to this chip by the switch") {
  fromChip.register_b_transport(this, &SwitchPort::bTransport);
}

void SwitchPort::bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  if (op.kind != tlm::OpKind::kSend || op.srcChip != m_chip || op.dstChip == m_chip || op.bytes == 0) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  toSwitch->b_transport(payload, delay);
}

}  // namespace scoville::hw
