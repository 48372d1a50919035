#include "hw/network/Switch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

namespace {

/// The largest sc_time <= `seconds`; used where a duration is subtracted from a release time, so
/// that rounding can only make the release later.
sc_core::sc_time durationFloor(double seconds) {
  const double ticks = seconds / tlm::resolutionSeconds();
  if (__builtin_expect(!(ticks > -1.0 && seconds <= tlm::kMaxSimulatedTimeS), 0)) tlm::throwTimeRange(seconds);
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::floor(ticks + 1e-6)));
}

/// The sender's (tx) and the receiver's (rx) link holds of one message of `bytes` routed as `r`.
template <typename Route>
std::pair<LinkDirection::Hold, LinkDirection::Hold> holdsOf(const Route& r, uint64_t bytes) {
  return {
      LinkDirection::hold(r.arrival, r.linkFree, r.upEnd, bytes, static_cast<uint64_t>(r.wire), r.packets, r.upSerial),
      LinkDirection::hold(r.headAtOutput, r.outStart, r.outEnd, bytes, static_cast<uint64_t>(r.downWire), r.downPackets,
                          r.downSerial)};
}

}  // namespace

Switch::Switch(const sc_core::sc_module_name& name, const SwitchConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      m_config(config),
      m_hop(tlm::durationCeil(config.hopLatencyS)),
      m_portOfChip(static_cast<std::size_t>(config.ports), nullptr),
      m_inputOfChip(static_cast<std::size_t>(config.ports), 0),
      m_rotationSeen(static_cast<std::size_t>(config.ports), 0),
      m_stats(basename(), "inter-chip packet switch"),
      m_messages(m_stats.counter("messages", "", "messages routed")),
      m_bytes(m_stats.counter("bytes", "B", "payload bytes routed")),
      m_packets(m_stats.counter("packets", "", "packets routed")),
      m_outputQueueTime(
          m_stats.counter("output_queue_time", "s", "time message heads waited for a busy output port (summed)")),
      m_creditStallTime(m_stats.counter("credit_stall_time", "s",
                                        "time senders' links were held waiting for input-buffer credits (summed)")),
      m_rotations(m_stats.counter("rotations", "",
                                  "rotations of mirrored collective groups served (each counted as its messages)")),
      m_symmetricRotations(m_stats.counter("symmetric_rotations", "",
                                           "rotations whose ports were all alike, timed once for all members")) {
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
  m_inputOfChip[static_cast<std::size_t>(chip)] = m_inputs.size() - 1;
}

Switch::Route Switch::plan(std::size_t input, const SwitchPort& out, uint64_t bytes,
                           const sc_core::sc_time& arrival) const {
  const SwitchPort& in = *m_inputs[input];
  const LinkConfig& up = in.config();
  const LinkConfig& down = out.config();
  const bool credit = m_config.flowControl == FlowControl::kCredit;
  Route r;
  // Each link carries the message in its own framing (MTU and header): where the receiver's link
  // has smaller packets or larger headers, more wire bytes go down than came up.
  r.packets = up.packetsFor(bytes);
  r.downPackets = down.packetsFor(bytes);
  r.wire = static_cast<double>(up.wireBytesFor(bytes));
  r.downWire = static_cast<double>(down.wireBytesFor(bytes));
  const auto packet = static_cast<double>(up.largestPacketFor(bytes));
  r.upSerial = r.wire / up.bandwidthBytesPerS;
  r.downSerial = r.downWire / down.bandwidthBytesPerS;
  const sc_core::sc_time& upLatency = in.latency();

  r.arrival = arrival;
  r.linkFree = std::max(arrival, in.tx().busyUntil());
  r.start = credit ? std::max(r.linkFree, m_creditReleaseAt[input]) : r.linkFree;
  r.headAtOutput = r.start + upLatency + m_hop;
  r.outStart = std::max(r.headAtOutput, out.rx().busyUntil());

  // Last byte leaves the sender: at link rate, unless the credit window runs out first.
  const double window = std::floor(m_config.inputBufferBytes / packet) * packet;
  r.upEnd = r.start + tlm::durationCeil(r.upSerial);
  if (credit && r.wire > window) {
    const double creditRoundTrip = 2.0 * up.latencyS + m_config.hopLatencyS + packet / down.bandwidthBytesPerS;
    const double pacedRate = std::min(up.bandwidthBytesPerS, window / creditRoundTrip);
    const sc_core::sc_time firstCredit = r.outStart + tlm::durationCeil(packet / down.bandwidthBytesPerS) + upLatency;
    const sc_core::sc_time resume = std::max(r.start + tlm::durationCeil(window / up.bandwidthBytesPerS), firstCredit);
    r.upEnd = std::max(r.upEnd, resume + tlm::durationCeil((r.wire - window) / pacedRate));
  }
  r.outEnd = std::max(r.outStart + tlm::durationCeil(r.downSerial), r.upEnd + upLatency + m_hop);
  r.lastByteIn = r.outEnd + out.latency();
  if (credit) {
    // The next message's first `window` bytes may follow only as the tail of this one drains.
    const sc_core::sc_time drained = r.outEnd + upLatency;
    const sc_core::sc_time lead = durationFloor(window / up.bandwidthBytesPerS);
    r.creditRelease = drained > lead ? drained - lead : sc_core::SC_ZERO_TIME;
  }
  return r;
}

void Switch::apply(const Route& r, std::size_t input, SwitchPort& out, const tlm::OpExtension& op) {
  SwitchPort& in = *m_inputs[input];
  if (m_config.flowControl == FlowControl::kCredit) m_creditReleaseAt[input] = r.creditRelease;
  const auto [up, down] = holdsOf(r, op.bytes);
  in.tx().occupy(up);
  out.rx().occupy(down);
  // A part that stands for alike lanes' parts counts once per lane (FabricInterface.h).
  const double k = static_cast<double>(op.lanes);
  m_messages.add(k);
  m_bytes.add(k * static_cast<double>(op.bytes));
  m_packets.add(k * static_cast<double>(r.packets));
  m_activity.emit(tlm::Activity::kLinkBytes, k * r.wire, op, r.start, r.upEnd, op.srcChip);  // sender -> switch
  m_activity.emit(tlm::Activity::kSwitchBytes, k * r.downWire, op, r.outStart, r.outEnd);
  m_activity.emit(tlm::Activity::kSwitchPackets, k * static_cast<double>(r.downPackets), op, r.outStart, r.outEnd);
  m_activity.emit(tlm::Activity::kLinkBytes, k * r.downWire, op, r.outStart, r.outEnd,
                  op.dstChip);             // switch -> receiver
  m_outputQueueTime.add(k * down.queueS);  // the head's wait for the output port
  m_creditStallTime.add(k * up.stallS);    // the sender's link held beyond its serialisation
}

void Switch::applyAlike(const Route& r, const std::vector<int>& chips, std::size_t shift, tlm::OpExtension& message) {
  const std::size_t n = chips.size();
  const bool credit = m_config.flowControl == FlowControl::kCredit;
  const auto [up, down] = holdsOf(r, message.bytes);
  // Each message's link events differ only in their chips: made once.
  const bool listening = m_activity.listening();
  const double k = static_cast<double>(message.lanes);  // alike lanes' parts (FabricInterface.h)
  tlm::ActivityEvent sent = m_activity.event(tlm::Activity::kLinkBytes, k * r.wire, message, r.start, r.upEnd);
  tlm::ActivityEvent received =
      m_activity.event(tlm::Activity::kLinkBytes, k * r.downWire, message, r.outStart, r.outEnd);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t input = m_rotationInputs[i];
    if (credit) m_creditReleaseAt[input] = r.creditRelease;
    m_inputs[input]->tx().occupy(up);
    m_rotationOutputs[i]->rx().occupy(down);
    if (listening) {
      // Only the chips some listener uses (the power model leaves out a mirror's links).
      sent.srcChip = received.srcChip = chips[i];
      sent.dstChip = received.dstChip = chips[(i + shift) % n];
      sent.chip = sent.srcChip;
      received.chip = received.dstChip;
      if (m_rotationChipUsed[i] != 0) m_activity.send(sent);
      if (m_rotationChipUsed[(i + shift) % n] != 0) m_activity.send(received);
    }
    // Summed one message at a time, as apply() sums them, so that the totals are the same bits.
    m_outputQueueTime.add(k * down.queueS);
    m_creditStallTime.add(k * up.stallS);
  }
  // Integer counts: n messages at once are exactly n times one.
  const auto count = k * static_cast<double>(n);
  m_messages.add(count);
  m_bytes.add(count * static_cast<double>(message.bytes));
  m_packets.add(count * static_cast<double>(r.packets));
  // The switch's own activity as one event per kind for the whole rotation: every output port
  // forwarded the same wire bytes and packets over the same interval.
  message.srcChip = chips.front();
  message.dstChip = chips[shift];
  m_activity.emit(tlm::Activity::kSwitchBytes, count * r.downWire, message, r.outStart, r.outEnd);
  m_activity.emit(tlm::Activity::kSwitchPackets, count * static_cast<double>(r.downPackets), message, r.outStart,
                  r.outEnd);
}

bool Switch::symmetric(const std::vector<std::size_t>& inputs, const std::vector<SwitchPort*>& outputs) const {
  const SwitchPort& first = *m_inputs[inputs.front()];
  const bool credit = m_config.flowControl == FlowControl::kCredit;
  const auto sameLink = [](const LinkConfig& a, const LinkConfig& b) {
    return a.bandwidthBytesPerS == b.bandwidthBytesPerS && a.latencyS == b.latencyS && a.mtuBytes == b.mtuBytes &&
           a.headerBytes == b.headerBytes;
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const SwitchPort& in = *m_inputs[inputs[i]];
    const SwitchPort& out = *outputs[i];
    if (!sameLink(in.config(), first.config()) || in.tx().busyUntil() != first.tx().busyUntil() ||
        out.rx().busyUntil() != outputs.front()->rx().busyUntil() ||
        (credit && m_creditReleaseAt[inputs[i]] != m_creditReleaseAt[inputs.front()])) {
      return false;
    }
  }
  return true;
}

void Switch::bTransport(int input, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  const auto attached = [this](int chip) {
    return chip >= 0 && chip < m_config.ports && m_portOfChip[static_cast<std::size_t>(chip)] != nullptr;
  };
  if (!attached(op.dstChip)) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
  if (op.rotation == nullptr) {
    SwitchPort& out = *m_portOfChip[static_cast<std::size_t>(op.dstChip)];
    const Route r = plan(static_cast<std::size_t>(input), out, op.bytes, arrival);
    apply(r, static_cast<std::size_t>(input), out, op);
    delay = r.lastByteIn - sc_core::sc_time_stamp();
    payload.set_response_status(::tlm::TLM_OK_RESPONSE);
    return;
  }

  // A rotation: member i sends the same message to member i + shift, in member order, all at
  // `arrival`. Each member's input and each receiver's output then appear in exactly one
  // message, so when all of them are alike (same link, same busy-until and credit times) every
  // message sees the same state the first one does, and its timing is the first one's: computed
  // once, applied to every port, each message still counted and its activity emitted. Otherwise
  // each message is routed on its own, in the same order. A batch of rotations (op.rotations)
  // is served as its rotations one after another; an alike rotation leaves its ports alike, and
  // the next one uses the same ports, so it is alike too.
  const std::vector<int>& chips = *op.rotation;
  const std::size_t n = chips.size();
  const auto first = static_cast<std::size_t>(op.rotationShift);
  const std::size_t count = op.rotations;
  bool valid = n >= 2 && first > 0 && count >= 1 && first + count <= n && chips.front() == op.srcChip &&
               chips[first] == op.dstChip && std::all_of(chips.begin(), chips.end(), attached);
  // Every member once: a port in two messages of a block would break the argument above.
  std::size_t marked = 0;
  for (; valid && marked < n; ++marked) valid = m_rotationSeen[static_cast<std::size_t>(chips[marked])]++ == 0;
  for (std::size_t i = 0; i < marked; ++i) m_rotationSeen[static_cast<std::size_t>(chips[i])] = 0;
  if (!valid) {
    payload.set_response_status(::tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  m_rotationInputs.clear();
  m_rotationChipUsed.clear();
  const bool listening = m_activity.listening();
  for (std::size_t i = 0; i < n; ++i) {
    m_rotationInputs.push_back(m_inputOfChip[static_cast<std::size_t>(chips[i])]);
    m_rotationChipUsed.push_back(listening && m_activity.usesChip(chips[i]) ? 1 : 0);
  }
  tlm::OpExtension message = op;
  message.rotation = nullptr;
  message.rotations = 1;
  sc_core::sc_time last = arrival;
  bool alike = false;
  for (std::size_t shift = first; shift < first + count; ++shift) {
    m_rotationOutputs.clear();
    for (std::size_t i = 0; i < n; ++i) {
      m_rotationOutputs.push_back(m_portOfChip[static_cast<std::size_t>(chips[(i + shift) % n])]);
    }
    alike = alike || symmetric(m_rotationInputs, m_rotationOutputs);
    if (alike) {
      const Route r = plan(m_rotationInputs.front(), *m_rotationOutputs.front(), op.bytes, arrival);
      applyAlike(r, chips, shift, message);
      last = std::max(last, r.lastByteIn);
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const Route r = plan(m_rotationInputs[i], *m_rotationOutputs[i], op.bytes, arrival);
        message.srcChip = chips[i];
        message.dstChip = chips[(i + shift) % n];
        apply(r, m_rotationInputs[i], *m_rotationOutputs[i], message);
        last = std::max(last, r.lastByteIn);
      }
    }
    m_rotations.add();
    if (alike) m_symmetricRotations.add();
  }
  delay = last - sc_core::sc_time_stamp();
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
}

}  // namespace scoville::hw
