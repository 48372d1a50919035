#include "hw/network/NetworkConfig.h"

#include <algorithm>
#include <cmath>

namespace scoville::hw {

using namespace scoville::config;

namespace {

bool wholeBytes(double v) {
  return std::floor(v) == v;
}

}  // namespace

uint64_t LinkConfig::packetsFor(uint64_t bytes) const {
  const auto mtu = static_cast<uint64_t>(mtuBytes);
  return (bytes + mtu - 1) / mtu;
}

uint64_t LinkConfig::wireBytesFor(uint64_t bytes) const {
  return bytes + packetsFor(bytes) * static_cast<uint64_t>(headerBytes);
}

uint64_t LinkConfig::largestPacketFor(uint64_t bytes) const {
  return std::min(bytes, static_cast<uint64_t>(mtuBytes)) + static_cast<uint64_t>(headerBytes);
}

const Schema<LinkConfig>& LinkConfig::schema() {
  static const Schema<LinkConfig> s =
      Schema<LinkConfig>("link",
                         "A full-duplex chip-to-switch link; messages are cut into MTU-sized packets, each "
                         "carrying a header, and the two directions are independent.")
          .quantity("bandwidth", &LinkConfig::bandwidthBytesPerS, dim::kBandwidth, required(), positive(),
                    "wire rate per direction (headers count against it)")
          .quantity("latency", &LinkConfig::latencyS, dim::kTime, required(), nonNegative(),
                    "one-way latency of a traversal: SerDes + FEC + time of flight")
          .quantity("mtu", &LinkConfig::mtuBytes, dim::kBytes, required(), between(1, 1 << 30),
                    "largest payload of one packet")
          .quantity("header", &LinkConfig::headerBytes, dim::kBytes, required(), between(0, 1 << 20),
                    "per-packet framing, routing and CRC bytes on the wire")
          .rule("mtu", "mtu must be a whole number of bytes",
                [](const LinkConfig& c) { return wholeBytes(c.mtuBytes); })
          .rule("header", "header must be a whole number of bytes",
                [](const LinkConfig& c) { return wholeBytes(c.headerBytes); });
  return s;
}

const Schema<SwitchConfig>& SwitchConfig::schema() {
  static const Schema<SwitchConfig> s =
      Schema<SwitchConfig>("switch",
                           "A single-stage packet switch routing by destination chip; each output sends one "
                           "message at a time at link rate.")
          .integer("ports", &SwitchConfig::ports, required(), between(2, 65536), "radix: chips that can attach")
          .quantity("hop_latency", &SwitchConfig::hopLatencyS, dim::kTime, required(), nonNegative(),
                    "header arrival to header departure (cut-through routing, arbitration, crossbar)")
          .quantity("input_buffer", &SwitchConfig::inputBufferBytes, dim::kBytes, required(), positive(),
                    "buffer per input port; with credit flow control a sender has at most this many bytes in "
                    "flight, so a buffer below bandwidth x (2 x link latency + hop latency) throttles even an "
                    "idle path")
          .choice("flow_control", &SwitchConfig::flowControl,
                  {{"credit", FlowControl::kCredit}, {"output_queued", FlowControl::kOutputQueued}}, optional("credit"),
                  "credit: senders stall when the input buffer toward a busy output is full; output_queued: "
                  "unbounded output queues, senders never stall")
          .optionalChild("power", &SwitchConfig::power, power::SwitchEnergyConfig::schema(),
                         "energy per byte and packet forwarded and static power; absent: not modelled")
          .rule("input_buffer", "input_buffer must be a whole number of bytes",
                [](const SwitchConfig& c) { return wholeBytes(c.inputBufferBytes); });
  return s;
}

const Schema<NetworkConfig>& NetworkConfig::schema() {
  static const Schema<NetworkConfig> s =
      Schema<NetworkConfig>("network", "Inter-chip fabric: every chip reaches one switch over an identical link.")
          .child("link", &NetworkConfig::link, LinkConfig::schema(), required(), "chip-to-switch links")
          .child("switch", &NetworkConfig::fabricSwitch, SwitchConfig::schema(), required(), "the switch")
          .rule("switch", "switch.input_buffer must hold at least one full packet (link.mtu + link.header)",
                [](const NetworkConfig& c) {
                  return c.fabricSwitch.inputBufferBytes >= c.link.mtuBytes + c.link.headerBytes;
                });
  return s;
}

}  // namespace scoville::hw
