#pragma once
// A single-stage packet switch for the inter-chip fabric; chips attach through SwitchPorts.
//
// Timing model (LT, computed per message from busy-until times; no event per packet). A message
// of P payload bytes becomes ceil(P / mtu) packets, W wire bytes with headers, each link in its
// own framing (W on the sender's link, W' on the receiver's; W' replaces W on the output side). It starts on the
// sender's tx direction at s = max(arrival, tx busy-until[, credit release]) and streams at link
// rate; the header reaches the switch after the link latency and is routed by dstChip after the
// hop latency (cut-through). The output port toward dstChip sends one message at a time: it
// starts at d = max(s + latency + hop, output busy-until) and is held until
// max(d + W / bw, last byte in + hop); the last byte reaches the destination one link latency later
// (the annotated completion time).
//
// Flow control. output_queued: the switch buffers without bound, so the sender's link never
// stalls. credit: an input buffer of B bytes (whole packets) bounds the bytes in flight. A
// message longer than B sends B bytes, then waits for the first credit (first packet forwarded +
// one link latency back); afterwards it is paced at min(bw, B / credit round trip). The sender's
// link stays held meanwhile (head-of-line blocking), and the next message on that input may start
// only when its first B bytes fit behind the previous message's draining tail. Buffers smaller
// than bw x (2 x latency + hop + packet time) therefore throttle even an idle path.
//
// Rotations (tlm::OpExtension::rotation). A mirrored tensor-parallel group sends each block of
// its collective (member i to member i + k, equal bytes) as one transaction. The switch serves
// it as those n messages in member order; when all their ports are alike it times the first and
// applies that timing to every port, which is what routing them one by one computes (each port
// appears once as a sender and once as a receiver in the block, so every message sees the state
// the first one saw). Statistics count every message either way, and each chip's link activity
// is emitted per message; the switch's own bytes and packets of an alike rotation are emitted as
// one event each, for all n messages (same interval, n times the amount).

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/network/NetworkConfig.h"
#include "hw/network/SwitchPort.h"
#include "tlm/ActivityBus.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

class Switch : public sc_core::sc_module {
 public:
  /// One binding per attached SwitchPort (made by attach); accepts that port's kSend payloads.
  tlm_utils::multi_passthrough_target_socket<Switch> socket;

  Switch(const sc_core::sc_module_name& name, const SwitchConfig& config);
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  /// Connects `port` (chip c) to switch port c: binds its toSwitch socket and drives its link.
  /// Throws std::invalid_argument if c is outside [0, ports), already attached, or the input
  /// buffer cannot hold one full packet of the port's link. Call during elaboration only.
  void attach(SwitchPort& port);

  const SwitchConfig& config() const { return m_config; }
  /// Sends this switch's activity (link and switch bytes, packets) to `bus`.
  void attachActivity(const tlm::ActivityBus& bus) { m_activity.attach(bus, name()); }
  const stats::Group& stats() const { return m_stats; }

 private:
  /// One message's timing through the switch, from the ports' state; changes nothing.
  struct Route {
    sc_core::sc_time arrival, linkFree, start, headAtOutput, outStart, upEnd, outEnd, lastByteIn, creditRelease;
    uint64_t packets = 0, downPackets = 0;
    double wire = 0.0, downWire = 0.0, upSerial = 0.0, downSerial = 0.0;
  };
  Route plan(std::size_t input, const SwitchPort& out, uint64_t bytes, const sc_core::sc_time& arrival) const;
  /// Holds the links, counts the message and emits its activity (op: its bytes and chips).
  void apply(const Route& route, std::size_t input, SwitchPort& out, const tlm::OpExtension& op);
  /// apply() for every message of a rotation whose ports are alike (all timed as `r`, the route
  /// of its first message): each port is held and counted, each chip's link activity emitted per
  /// message; the switch's own activity is emitted once, for all n messages together.
  void applyAlike(const Route& r, const std::vector<int>& chips, std::size_t shift, tlm::OpExtension& message);
  /// Whether messages inputs[i] -> outputs[i] all see the same link configuration and state.
  bool symmetric(const std::vector<std::size_t>& inputs, const std::vector<SwitchPort*>& outputs) const;
  void bTransport(int input, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  SwitchConfig m_config;
  sc_core::sc_time m_hop;                           ///< hop latency on the kernel's time grid
  std::vector<SwitchPort*> m_inputs;                // by socket binding index
  std::vector<SwitchPort*> m_portOfChip;            // by chip id; null where nothing is attached
  std::vector<std::size_t> m_inputOfChip;           // by chip id: its port's binding index
  std::vector<std::size_t> m_rotationInputs;        // scratch of bTransport
  std::vector<SwitchPort*> m_rotationOutputs;       // scratch of bTransport
  std::vector<uint8_t> m_rotationChipUsed;          // scratch of bTransport: member i's link events are used
  std::vector<uint8_t> m_rotationSeen;              // scratch of bTransport: members met, by chip
  std::vector<sc_core::sc_time> m_creditReleaseAt;  // by binding index: earliest next start (credit)

  tlm::ActivitySource m_activity;
  stats::Group m_stats;
  stats::Counter& m_messages;
  stats::Counter& m_bytes;
  stats::Counter& m_packets;
  stats::Counter& m_outputQueueTime;
  stats::Counter& m_creditStallTime;
  stats::Counter& m_rotations;
  stats::Counter& m_symmetricRotations;
};

}  // namespace scoville::hw
