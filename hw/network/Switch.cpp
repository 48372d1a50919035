#include "hw/network/Switch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

namespace {

/// The largest sc_time <= `seconds`; used where a duration is subtracted from a release time, so
/// that rounding can only make the release later.
sc_core::sc_time durationFloor(double seconds) {
  const double ticks = seconds / tlm::resolutionSeconds();
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::floor(ticks + 1e-6)));
}

}  // namespace

Switch::Switch(const sc_core::sc_module_name& name, const SwitchConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      m_config(config),
      m_hop(tlm::durationCeil(config.hopLatencyS)),
      m_portOfChip(static_cast<std::size_t>(config.ports), nullptr),
      m_stats(basename(), "inter-chip packet switch"),
      m_messages(m_stats.counter("messages", "", "messages routed")),
      m_bytes(m_stats.counter("bytes", "B", "payload bytes routed")),
      m_packets(m_stats.counter("packets", "", "packets routed")),
      m_outputQueueTime(
          m_stats.counter("output_queue_time", "s", "time message heads waited for a busy output port (summed)")),
      m_creditStallTime(m_stats.counter("credit_stall_time", "s",
                                        "time senders' links were held waiting for input-buffer credits (summed)")) {
  socket.register_b_transport(this, &Switch::bTransport);
  m_stats.formula("mean_output_queue_time", "s", "output queueing time per message",
                  [this] { return m_messages.value() > 0 ? m_outputQueueTime.value() / m_messages.value() : 0.0; });
  m_stats.formula("output_utilization", "", "bytes routed at wire rate / (attached ports x simulated time)", [this] {
    double busy = 0.0;
    for (const SwitchPort* port : m_inputs) busy += port->stats().value("rx_busy_time");
    const double elapsed = sc_core::sc_time_stamp().to_seconds();
    return elapsed > 0 && !m_inputs.empty() ? busy / (static_cast<double>(m_inputs.size()) * elapsed) : 0.0;
  });
}

void Switch::attach(SwitchPort& port) {
  const int chip = port.chip();
  if (chip < 0 || chip >= m_config.ports) {
    throw std::invalid_argument(std::string(name()) + ": chip " + std::to_string(chip) + " is outside the " +
                                std::to_string(m_config.ports) + " switch ports");
  }
  if (m_portOfChip[static_cast<std::size_t>(chip)] != nullptr) {
    throw std::invalid_argument(std::string(name()) + ": chip " + std::to_string(chip) + " is already attached");
  }
  if (m_config.inputBufferBytes < port.config().mtuBytes + port.config().headerBytes) {
    throw std::invalid_argument(std::string(name()) + ": input_buffer is smaller than one packet (mtu + header) of " +
                                port.name());
  }
  port.toSwitch.bind(socket);  // binding index == position in m_inputs
  m_inputs.push_back(&port);
  m_creditReleaseAt.push_back(sc_core::SC_ZERO_TIME);
  m_portOfChip[static_cast<std::size_t>(chip)] = &port;
}

void Switch::bTransport(int input, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  if (op.dstChip < 0 || op.dstChip >= m_config.ports || m_portOfChip[static_cast<std::size_t>(op.dstChip)] == nullptr) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  SwitchPort& in = *m_inputs[static_cast<std::size_t>(input)];
  SwitchPort& out = *m_portOfChip[static_cast<std::size_t>(op.dstChip)];
  const LinkConfig& up = in.config();
  const LinkConfig& down = out.config();
  const bool credit = m_config.flowControl == FlowControl::kCredit;

  // Each link carries the message in its own framing (MTU and header): where the receiver's link
  // has smaller packets or larger headers, more wire bytes go down than came up.
  const uint64_t packets = up.packetsFor(op.bytes);
  const auto wire = static_cast<double>(up.wireBytesFor(op.bytes));
  const auto downWire = static_cast<double>(down.wireBytesFor(op.bytes));
  const auto packet = static_cast<double>(up.largestPacketFor(op.bytes));
  const double upSerial = wire / up.bandwidthBytesPerS;
  const double downSerial = downWire / down.bandwidthBytesPerS;
  const sc_core::sc_time& upLatency = in.latency();
  const sc_core::sc_time& hop = m_hop;

  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
  const sc_core::sc_time linkFree = std::max(arrival, in.tx().busyUntil());
  const sc_core::sc_time start =
      credit ? std::max(linkFree, m_creditReleaseAt[static_cast<std::size_t>(input)]) : linkFree;
  const sc_core::sc_time headAtOutput = start + upLatency + hop;
  const sc_core::sc_time outStart = std::max(headAtOutput, out.rx().busyUntil());

  // Last byte leaves the sender: at link rate, unless the credit window runs out first.
  const double window = std::floor(m_config.inputBufferBytes / packet) * packet;
  sc_core::sc_time upEnd = start + tlm::durationCeil(upSerial);
  if (credit && wire > window) {
    const double creditRoundTrip = 2.0 * up.latencyS + m_config.hopLatencyS + packet / down.bandwidthBytesPerS;
    const double pacedRate = std::min(up.bandwidthBytesPerS, window / creditRoundTrip);
    const sc_core::sc_time firstCredit = outStart + tlm::durationCeil(packet / down.bandwidthBytesPerS) + upLatency;
    const sc_core::sc_time resume = std::max(start + tlm::durationCeil(window / up.bandwidthBytesPerS), firstCredit);
    upEnd = std::max(upEnd, resume + tlm::durationCeil((wire - window) / pacedRate));
  }
  const sc_core::sc_time outEnd = std::max(outStart + tlm::durationCeil(downSerial), upEnd + upLatency + hop);
  const sc_core::sc_time lastByteIn = outEnd + out.latency();

  if (credit) {
    // The next message's first `window` bytes may follow only as the tail of this one drains.
    const sc_core::sc_time drained = outEnd + upLatency;
    const sc_core::sc_time lead = durationFloor(window / up.bandwidthBytesPerS);
    m_creditReleaseAt[static_cast<std::size_t>(input)] = drained > lead ? drained - lead : sc_core::SC_ZERO_TIME;
  }

  in.tx().occupy(arrival, linkFree, upEnd, op.bytes, static_cast<uint64_t>(wire), packets, upSerial);
  out.rx().occupy(headAtOutput, outStart, outEnd, op.bytes, static_cast<uint64_t>(downWire), down.packetsFor(op.bytes),
                  downSerial);
  m_messages.add();
  m_bytes.add(static_cast<double>(op.bytes));
  m_packets.add(static_cast<double>(packets));
  m_activity.emit(tlm::Activity::kLinkBytes, wire, op, start, upEnd, op.srcChip);  // sender -> switch
  m_activity.emit(tlm::Activity::kSwitchBytes, downWire, op, outStart, outEnd);
  m_activity.emit(tlm::Activity::kSwitchPackets, static_cast<double>(down.packetsFor(op.bytes)), op, outStart, outEnd);
  m_activity.emit(tlm::Activity::kLinkBytes, downWire, op, outStart, outEnd, op.dstChip);  // switch -> receiver
  m_outputQueueTime.add(tlm::seconds(outStart - headAtOutput));
  m_creditStallTime.add(std::max(0.0, tlm::seconds(upEnd - linkFree) - upSerial));

  delay = lastByteIn - sc_core::sc_time_stamp();
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
}

}  // namespace scoville::hw
