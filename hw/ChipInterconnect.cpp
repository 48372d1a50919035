#include "hw/ChipInterconnect.h"

#include <algorithm>

#include "tlm/Time.h"

namespace scoville::hw {

ChipInterconnect::ChipInterconnect(const sc_core::sc_module_name& name, const InterconnectConfig& config,
                                   double sramCapacityBytes)
    : sc_core::sc_module(name),
      socket("socket"),
      toMemory("to_memory"),
      toSram("to_sram"),
      toTensorCore("to_tensor_core"),
      toVectorUnit("to_vector_unit"),
      toCommandProcessor("to_command_processor"),
      m_config(config),
      m_sramCapacity(sramCapacityBytes),
      m_hopLatency(tlm::durationCeil(config.hopLatencyS)),
      m_stats("interconnect", "on-chip network"),
      m_portBusyTime(m_stats.counter("port_busy_time", "s", "data transfer time summed over unit ports")) {
  const char* names[kPorts] = {"to_memory", "to_sram", "to_tensor_core", "to_vector_unit", "to_command_processor"};
  for (int p = 0; p < kPorts; ++p) {
    m_portBusyUntil[p] = sc_core::SC_ZERO_TIME;
    m_awaitingEndRequest[p] = false;
    m_routed[p] = &m_stats.counter(names[p], "", "transactions routed to this unit");
  }
  socket.register_b_transport(this, &ChipInterconnect::bTransport);
  socket.register_nb_transport_fw(this, &ChipInterconnect::nbTransportFw);
  for (auto* s : {&toMemory, &toSram, &toTensorCore, &toVectorUnit, &toCommandProcessor}) {
    s->register_nb_transport_bw(this, &ChipInterconnect::nbTransportBw);
  }
}

ChipInterconnect::Port ChipInterconnect::route(::tlm::tlm_generic_payload& payload) const {
  switch (tlm::opOf(payload).kind) {
    case tlm::OpKind::kGemm: return kTensorCore;
    case tlm::OpKind::kVector: return kVectorUnit;
    case tlm::OpKind::kLaunch: return kCommandProcessor;
    case tlm::OpKind::kRead:
    case tlm::OpKind::kWrite:
    case tlm::OpKind::kKvRead:
    case tlm::OpKind::kKvAppend: {
      const uint64_t address = payload.get_address();
      if (address < kSramBaseAddress) return kMemory;
      if (static_cast<double>(address - kSramBaseAddress) < m_sramCapacity) return kSram;
      return kNone;
    }
    case tlm::OpKind::kSend: return kNone;  // inter-chip traffic goes through a switch port
  }
  return kNone;
}

uint64_t ChipInterconnect::baseOf(Port port) {
  return port == kSram ? kSramBaseAddress : 0;
}

tlm_utils::simple_initiator_socket<ChipInterconnect>& ChipInterconnect::portSocket(Port port) {
  switch (port) {
    case kSram: return toSram;
    case kTensorCore: return toTensorCore;
    case kVectorUnit: return toVectorUnit;
    case kCommandProcessor: return toCommandProcessor;
    default: return toMemory;
  }
}

sc_core::sc_time ChipInterconnect::crossPort(Port port, const tlm::OpExtension& op, const sc_core::sc_time& arrival) {
  if (op.bytes == 0) return arrival;
  const double transfer = static_cast<double>(op.bytes) / m_config.bandwidthBytesPerS;
  const sc_core::sc_time start = std::max(arrival, m_portBusyUntil[port]);
  m_portBusyUntil[port] = start + tlm::durationCeil(transfer);
  m_portBusyTime.add(transfer);
  // Bytes to or from the HBM controller and the SRAM cross different distances of the die.
  if (port == kMemory || port == kSram) {
    m_activity.emit(port == kMemory ? tlm::Activity::kNocMemoryBytes : tlm::Activity::kNocSramBytes,
                    static_cast<double>(op.bytes), op, start, m_portBusyUntil[port]);
  }
  return m_portBusyUntil[port];
}

void ChipInterconnect::bTransport(int, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const Port port = route(payload);
  if (port == kNone) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  m_routed[port]->add();
  delay += m_hopLatency;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time crossed = crossPort(port, tlm::opOf(payload), now + delay);
  const uint64_t address = payload.get_address();
  payload.set_address(address - baseOf(port));  // units see their own address space
  portSocket(port)->b_transport(payload, delay);
  payload.set_address(address);
  delay = std::max(now + delay, crossed) + m_hopLatency - now;
}

::tlm::tlm_sync_enum ChipInterconnect::nbTransportFw(int id, ::tlm::tlm_generic_payload& payload,
                                                     ::tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != ::tlm::BEGIN_REQ) {
    // END_RESP for a transaction this interconnect forwarded.
    const auto it = m_inFlight.find(&payload);
    const Port port = it != m_inFlight.end() ? it->second.port : route(payload);
    return portSocket(port)->nb_transport_fw(payload, phase, delay);
  }
  const Port port = route(payload);
  if (port == kNone) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return ::tlm::TLM_COMPLETED;
  }
  m_routed[port]->add();
  delay += m_hopLatency;
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
  m_inFlight[&payload] = InFlight{id, port, crossPort(port, tlm::opOf(payload), arrival)};
  payload.set_address(payload.get_address() - baseOf(port));  // restored with the response
  if (m_awaitingEndRequest[port] || !m_held[port].empty()) {
    m_held[port].push_back(Held{&payload, arrival});
    return ::tlm::TLM_ACCEPTED;  // END_REQ follows on the backward path
  }
  return forwardRequest(port, payload, phase, delay);
}

::tlm::tlm_sync_enum ChipInterconnect::forwardRequest(Port port, ::tlm::tlm_generic_payload& payload,
                                                      ::tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  const ::tlm::tlm_sync_enum status = portSocket(port)->nb_transport_fw(payload, phase, delay);
  if (status == ::tlm::TLM_ACCEPTED) m_awaitingEndRequest[port] = true;
  if (status == ::tlm::TLM_COMPLETED) m_inFlight.erase(&payload);
  return status;
}

void ChipInterconnect::drainPending(Port port) {
  while (!m_awaitingEndRequest[port] && !m_held[port].empty()) {
    const Held held = m_held[port].front();
    m_held[port].pop_front();
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::sc_time delay = held.arrival > now ? held.arrival - now : sc_core::SC_ZERO_TIME;
    ::tlm::tlm_phase phase = ::tlm::BEGIN_REQ;
    const int initiator = m_inFlight.at(held.payload).initiator;
    const ::tlm::tlm_sync_enum status = forwardRequest(port, *held.payload, phase, delay);
    if (status == ::tlm::TLM_UPDATED || status == ::tlm::TLM_COMPLETED) {
      // Tell the held initiator what the unit answered: END_REQ, or an early response.
      if (status == ::tlm::TLM_COMPLETED) phase = ::tlm::BEGIN_RESP;
      socket[initiator]->nb_transport_bw(*held.payload, phase, delay);
    }
  }
}

::tlm::tlm_sync_enum ChipInterconnect::nbTransportBw(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                                     sc_core::sc_time& delay) {
  const auto it = m_inFlight.find(&payload);
  if (it == m_inFlight.end()) {
    SC_REPORT_ERROR("scoville/protocol", "interconnect: backward call for a transaction it did not forward");
    return ::tlm::TLM_COMPLETED;
  }
  const InFlight flight = it->second;
  if (phase == ::tlm::BEGIN_RESP) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = std::max(now + delay, flight.dataCrossed) + m_hopLatency - now;
    payload.set_address(payload.get_address() + baseOf(flight.port));
    m_inFlight.erase(it);
  }
  const ::tlm::tlm_sync_enum status = socket[flight.initiator]->nb_transport_bw(payload, phase, delay);
  if (phase == ::tlm::END_REQ) {
    m_awaitingEndRequest[flight.port] = false;
    drainPending(flight.port);
  }
  return status;
}

}  // namespace scoville::hw
