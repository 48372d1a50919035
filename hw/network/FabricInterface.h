#pragma once
// A chip's fabric interface: the target its engines send kSend messages to, and the DMA logic
// that stripes each message over the chip's fabric lanes.
//
// A lane is one path into the fabric: a switch plane (switched topology) or the single attachment
// to a direct or multi-tier fabric. A message of B bytes is cut into one part per lane in
// proportion to the lane weights (the ports each lane holds): lane i gets floor(B w_i / W) bytes,
// and the B - sum remaining bytes go one each to the first lanes. Parts go out together at the
// message's arrival time; the message completes when its last part has arrived (the largest
// annotated delay), and its response is the first error any part returned.
//
// Alike lanes (setAlikeLanes): when every lane has the same weight and leads to an identical
// switch plane used by nothing else, every plane sees the same messages, lane 0's part being the
// largest (it takes a remainder byte whenever there is one). Each plane's timing is a monotone
// function of its part sizes, so lane 0's part always arrives last: sending lane 0's part alone,
// marked as standing for the lanes that carry a part (OpExtension::lanes), gives every message
// the completion time the full striping gives. The other planes stay idle; the switch counts
// lane 0's bytes, packets and activity once per lane (at most lanes - 1 bytes over per message:
// the remainder).

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "stats/StatsGroup.h"
#include "tlm/PayloadPool.h"

namespace scoville::hw {

class FabricInterface : public sc_core::sc_module {
 public:
  /// Accepts kSend payloads with srcChip == chip(); others get TLM_COMMAND_ERROR_RESPONSE. Any
  /// number of senders (collective groups, pipeline links) may bind, or none (an idle chip).
  tlm_utils::multi_passthrough_target_socket<FabricInterface, 32, ::tlm::tlm_base_protocol_types, 0,
                                             sc_core::SC_ZERO_OR_MORE_BOUND>
      fromChip;
  /// Binding i is lane i; bind exactly laneWeights.size() targets.
  tlm_utils::multi_passthrough_initiator_socket<FabricInterface> toFabric;

  /// Throws std::invalid_argument for no lanes or a non-positive weight.
  FabricInterface(const sc_core::sc_module_name& name, int chip, std::vector<double> laneWeights);
  FabricInterface(const FabricInterface&) = delete;
  FabricInterface& operator=(const FabricInterface&) = delete;

  int chip() const { return m_chip; }
  /// Whether every lane has the same weight.
  bool equalLanes() const;
  /// Bytes of a `bytes` message each lane carries.
  std::vector<uint64_t> parts(uint64_t bytes) const;
  /// Send lane 0's part alone for all lanes (see above). Throws std::invalid_argument when the
  /// lanes' weights differ. The platform sets it before the simulation starts.
  void setAlikeLanes(bool alike);
  const stats::Group& stats() const { return m_stats; }

 private:
  void bTransport(int sender, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void end_of_elaboration() override;

  int m_chip;
  std::vector<double> m_weights;
  double m_totalWeight = 0.0;
  bool m_alikeLanes = false;
  tlm::PayloadPool m_pool;
  stats::Group m_stats;
  stats::Counter& m_messages;
  stats::Counter& m_bytes;
};

}  // namespace scoville::hw
