#include "hw/network/FabricInterface.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "tlm/OpExtension.h"
#include "tlm/TransactionCount.h"

namespace scoville::hw {

FabricInterface::FabricInterface(const sc_core::sc_module_name& name, int chip, std::vector<double> laneWeights)
    : sc_core::sc_module(name),
      fromChip("fromChip"),
      toFabric("toFabric"),
      m_chip(chip),
      m_weights(std::move(laneWeights)),
      m_stats(basename(), "the chip's fabric interface: messages it striped over its lanes"),
      m_messages(m_stats.counter("messages", "", "messages sent")),
      m_bytes(m_stats.counter("bytes", "B", "payload bytes sent")) {
  if (m_weights.empty()) throw std::invalid_argument(std::string(this->name()) + ": a fabric interface needs a lane");
  for (const double w : m_weights) {
    if (!(w > 0)) throw std::invalid_argument(std::string(this->name()) + ": lane weights must be > 0");
    m_totalWeight += w;
  }
  fromChip.register_b_transport(this, &FabricInterface::bTransport);
}

void FabricInterface::end_of_elaboration() {
  if (static_cast<std::size_t>(toFabric.size()) != m_weights.size()) {
    SC_REPORT_ERROR(name(), ("toFabric has " + std::to_string(toFabric.size()) + " bindings for " +
                             std::to_string(m_weights.size()) + " lanes")
                                .c_str());
  }
}

std::vector<uint64_t> FabricInterface::parts(uint64_t bytes) const {
  uint64_t assigned = 0;
  std::vector<uint64_t> out(m_weights.size());
  for (std::size_t i = 0; i < m_weights.size(); ++i) {
    out[i] = static_cast<uint64_t>(std::floor(static_cast<double>(bytes) * m_weights[i] / m_totalWeight));
    assigned += out[i];
  }
  for (std::size_t i = 0; assigned < bytes; i = (i + 1) % out.size(), ++assigned) ++out[i];
  return out;
}

bool FabricInterface::equalLanes() const {
  return std::all_of(m_weights.begin(), m_weights.end(), [this](double w) { return w == m_weights.front(); });
}

void FabricInterface::setAlikeLanes(bool alike) {
  if (alike && !equalLanes()) {
    throw std::invalid_argument(std::string(name()) + ": alike lanes need equal lane weights");
  }
  m_alikeLanes = alike;
}

void FabricInterface::bTransport(int /*sender*/, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  if (op.kind != tlm::OpKind::kSend || op.srcChip != m_chip) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  ++tlm::unitTransactions();
  // A batch of rotations is this chip's one message per rotation.
  const double messages = op.rotation != nullptr ? static_cast<double>(op.rotations) : 1.0;
  m_messages.add(messages);
  m_bytes.add(messages * static_cast<double>(op.bytes));
  if (m_weights.size() == 1) {
    toFabric[0]->b_transport(payload, delay);
    return;
  }
  sc_core::sc_time done = delay;
  ::tlm::tlm_response_status status = ::tlm::TLM_OK_RESPONSE;
  const std::vector<uint64_t> split = parts(op.bytes);
  // Alike lanes: lane 0's part, the largest, goes alone and stands for every lane that carries one.
  const std::size_t sent = m_alikeLanes ? 1 : split.size();
  const auto lanes = static_cast<uint32_t>(
      m_alikeLanes ? std::count_if(split.begin(), split.end(), [](uint64_t b) { return b > 0; }) : 1);
  for (std::size_t lane = 0; lane < sent; ++lane) {
    const uint64_t bytes = split[lane];
    if (bytes == 0) continue;
    tlm::PayloadRef part(m_pool);
    part.op() = op;
    part.op().bytes = bytes;
    part.op().lanes = lanes;
    part->set_command(payload.get_command());
    part->set_address(payload.get_address());
    part->set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time partDelay = delay;
    toFabric[static_cast<int>(lane)]->b_transport(*part, partDelay);
    done = std::max(done, partDelay);
    if (status == ::tlm::TLM_OK_RESPONSE) status = part->get_response_status();
  }
  delay = done;
  payload.set_response_status(status);
}

}  // namespace scoville::hw
