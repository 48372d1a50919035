#include "runtime/StepDriver.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "runtime/KvFetcher.h"
#include "tlm/PayloadBuilder.h"

namespace scoville::runtime {

StepDriver::StepDriver(const sc_core::sc_module_name& name, const hw::ChipConfig& chip, tlm::TimingMode mode)
    : sc_core::sc_module(name),
      loadPort("load", mode, sc_core::sc_time(kQuantumS, sc_core::SC_SEC)),
      computePort("compute", mode, sc_core::sc_time(kQuantumS, sc_core::SC_SEC)),
      m_freeBuffers("free_buffers", chip.sram.stagingBuffers),
      m_loadIssue(chip.sram.loadIssue),
      m_chipLaunches(chip.commandProcessor.launchesKernels()) {
  SC_HAS_PROCESS(StepDriver);
  SC_THREAD(loadStream);
  SC_THREAD(computeStream);
}

StepDriver::StepDriver(const sc_core::sc_module_name& name, StepPlan plan, const hw::ChipConfig& chip,
                       tlm::TimingMode mode)
    : StepDriver(name, chip, mode) {
  m_plan = std::make_shared<const StepPlan>(std::move(plan));
  m_timings.assign(m_plan->ops.size(), OpTiming{});
  m_running = true;
  m_loadPending = true;
}

void StepDriver::post(std::shared_ptr<const StepPlan> plan, const StepDriver* leader) {
  if (m_running) throw std::logic_error(fmt::format("{}: a step was posted before the last one finished", name()));
  if (leader != nullptr && leader->m_plan->ops.size() != plan->ops.size()) {
    throw std::logic_error(fmt::format("{}: mirrors {}, whose plan differs", name(), leader->name()));
  }
  m_plan = std::move(plan);
  m_timings.assign(m_plan->ops.size(), OpTiming{});
  m_leader = leader;
  m_opsComputed = 0;
  m_opsDone = 0;
  m_opsSent = 0;
  m_rawLoadEnd = m_stretchedLoadEnd = sc_core::SC_ZERO_TIME;
  m_running = true;
  m_loadPending = leader == nullptr;  // a mirror loads nothing
  m_posted.notify(sc_core::SC_ZERO_TIME);
}

::tlm::tlm_generic_payload& StepDriver::prepare(tlm::OpKind kind, uint64_t address, uint64_t bytes,
                                                const tlm::GemmShape* gemm, const PlannedOp& planned, double elementOps,
                                                bool converting) {
  tlm::PayloadBuilder op(kind);
  op.address(address)
      .bytes(bytes)
      .precision(m_plan->computePrecision)
      .phase(planned.phase)
      .block(planned.block)
      .layer(planned.layer)
      .elementOps(elementOps, elementOps > 0 && !converting ? planned.specialOps : 0.0, converting ? elementOps : 0.0)
      .dataToggle(m_plan->dataToggle);
  if (gemm != nullptr) op.shape(*gemm);
  if (gemm != nullptr || elementOps > 0) op.kernel(planned.warpMma && gemm != nullptr, planned.grid.get());
  return op.build(m_pool);
}

bool StepDriver::checkResponse(const ::tlm::tlm_generic_payload& payload, const PlannedOp& planned) {
  if (payload.get_response_status() == ::tlm::TLM_OK_RESPONSE) return true;
  if (m_error.empty()) {
    const tlm::OpExtension& op = *payload.get_extension<tlm::OpExtension>();
    m_error = fmt::format("layer {}: {} at address {:#x} ({} bytes) failed: {}", planned.layer,
                          tlm::opKindName(op.kind), payload.get_address(), op.bytes, payload.get_response_string());
  }
  return false;
}

bool StepDriver::issue(tlm::InitiatorPort& port, tlm::OpKind kind, uint64_t address, uint64_t bytes,
                       const tlm::GemmShape* gemm, const PlannedOp& planned, double elementOps, double* queuedS) {
  tlm::PayloadRef payload(prepare(kind, address, bytes, gemm, planned, elementOps));
  port.transport(*payload);
  if (queuedS != nullptr) *queuedS += tlm::opOf(*payload).queuedS;
  return checkResponse(*payload, planned);
}

// The load stream takes a free staging buffer for each tile and sends the tile's local HBM
// requests (reads, KV appends). load_issue overlapped: a DMA engine, it sends them all without
// waiting for their data and goes on to the next tile; the compute stream awaits a tile's
// responses before computing it. So at most `stagingBuffers` tiles' requests are in flight, and a
// channel held up (by a refresh, a row conflict) delays only its own share, not the next tile's
// requests on the other channels. load_issue serial: each request waits for the previous one's
// data. Off-chip KV (through the KvFetcher) is fetched in line: the stream waits for it.
// Both streams synchronise their loosely-timed local time before touching the shared buffers,
// so the other stream sees the right time.
void StepDriver::loadStream() {
  while (true) {
    while (!m_loadPending) sc_core::wait(m_posted);
    m_loadPending = false;
    for (std::size_t i = 0; i < m_plan->ops.size() && m_error.empty(); ++i) {
      const PlannedOp& op = m_plan->ops[i];
      loadPort.sync();
      const double stackLaunchS = m_stack != nullptr ? m_stack->kernelLaunchS : 0.0;
      if ((m_chipLaunches || stackLaunchS > 0.0) && SoftwareStackConfig::startsKernel(m_plan->ops, i)) {
        // Kernels on one stream: this one is launched once the previous kernel and its collective
        // have ended (the stack's launch time, then the chip's command processor), and only then
        // loads its operands.
        while (m_opsDone < i && m_error.empty()) sc_core::wait(m_opDone);
        if (stackLaunchS > 0.0) sc_core::wait(sc_core::sc_time(stackLaunchS, sc_core::SC_SEC));
        if (m_chipLaunches && m_error.empty()) {
          if (!issue(loadPort, tlm::OpKind::kLaunch, 0, 0, nullptr, op)) break;
          loadPort.sync();
        }
      }
      if (!op.accesses.empty()) m_freeBuffers.wait();  // tiles without operands need no buffer
      m_timings[i].loadStart = sc_core::sc_time_stamp();
      m_timings[i].loadEnd = m_timings[i].loadStart;
      if (op.convertOps > 0.0) {
        // Weights stored narrower than the compute are converted as they arrive: the vector unit
        // works beside the tile's loads, and the tile is ready when both are done.
        ::tlm::tlm_generic_payload& payload =
            prepare(tlm::OpKind::kVector, 0, 0, nullptr, op, op.convertOps, /*converting=*/true);
        loadPort.send(payload);
        m_inFlight.push_back(InFlight{i, &payload});
      }
      const bool serial = m_loadIssue == hw::LoadIssue::kSerial;
      for (const MemoryAccess& access : op.accesses) {
        if (access.tier == hw::KvTier::kLocalHbm && serial) {
          if (!issue(loadPort, access.kind, access.address, access.bytes, nullptr, op)) break;
          continue;
        }
        if (access.tier == hw::KvTier::kLocalHbm) {
          ::tlm::tlm_generic_payload& payload = prepare(access.kind, access.address, access.bytes, nullptr, op);
          loadPort.send(payload);
          m_inFlight.push_back(InFlight{i, &payload});
          continue;
        }
        if (m_fetcher == nullptr) {
          m_error = fmt::format("layer {}: {} reads KV on {} but the driver has no KV fetcher", op.layer, op.name,
                                hw::kvTierName(access.tier));
          break;
        }
        loadPort.sync();
        if (!m_fetcher->access(access, op)) {
          m_error = m_fetcher->error();
          break;
        }
        m_timings[i].loadEnd = sc_core::sc_time_stamp();
      }
      if (serial && m_error.empty()) {
        loadPort.sync();
        if (m_stack != nullptr && m_stack->memoryEfficiency < 1.0 && !op.accesses.empty()) {
          // The stack reaches only part of the memory system: the tile's data comes in that much later.
          sc_core::wait((sc_core::sc_time_stamp() - m_timings[i].loadStart) * (1.0 / m_stack->memoryEfficiency - 1.0));
        }
        m_timings[i].loadEnd = sc_core::sc_time_stamp();
      }
      m_opsSent = i + 1;
      m_opSent.notify(sc_core::SC_ZERO_TIME);
    }
    if (!m_error.empty()) {
      m_opSent.notify();  // the compute stream stops at the error
      return;
    }
  }
}

bool StepDriver::awaitResponses(std::size_t i) {
  OpTiming& timing = m_timings[i];
  bool ok = true;
  while (m_inFlightHead < m_inFlight.size() && m_inFlight[m_inFlightHead].op == i) {
    ::tlm::tlm_generic_payload& payload = *m_inFlight[m_inFlightHead++].payload;
    if (m_inFlightHead == m_inFlight.size()) {
      m_inFlight.clear();
      m_inFlightHead = 0;
    }
    timing.loadEnd = std::max(timing.loadEnd, loadPort.await(payload));
    ok = checkResponse(payload, m_plan->ops[i]) && ok;
    payload.release();
  }
  return ok;
}

bool StepDriver::awaitLoad(std::size_t i) {
  while (m_opsSent <= i && m_error.empty()) sc_core::wait(m_opSent);
  if (!m_error.empty() || !awaitResponses(i)) return false;
  OpTiming& timing = m_timings[i];
  if (m_loadIssue == hw::LoadIssue::kOverlapped && m_stack != nullptr && m_stack->memoryEfficiency < 1.0 &&
      !m_plan->ops[i].accesses.empty()) {
    // The software stack moves each tile's bytes 1 / efficiency times as slowly as the memory
    // system: the tile's own service time (from its start or the previous tile's data, whichever
    // is later, to its data) is stretched, and the stretched tiles follow one another. With
    // tiles loaded one at a time this is loadStart + (loadEnd - loadStart) / efficiency.
    const sc_core::sc_time raw = timing.loadEnd;
    const sc_core::sc_time own = raw - std::max(timing.loadStart, std::min(raw, m_rawLoadEnd));
    timing.loadEnd =
        std::max(raw, std::max(timing.loadStart, m_stretchedLoadEnd) + own * (1.0 / m_stack->memoryEfficiency));
    m_rawLoadEnd = raw;
    m_stretchedLoadEnd = timing.loadEnd;
  }
  if (timing.loadEnd > sc_core::sc_time_stamp()) sc_core::wait(timing.loadEnd - sc_core::sc_time_stamp());
  return true;
}

void StepDriver::computeStream() {
  while (true) {
    while (!m_running) sc_core::wait(m_posted);
    if (!runStep()) return;  // an error stops the driver: the run is invalid
    m_running = false;
    ++m_steps;
    m_stepDone.notify(sc_core::SC_ZERO_TIME);
  }
}

bool StepDriver::runStep() {
  const sc_core::sc_time begin = sc_core::sc_time_stamp();
  if (m_leader != nullptr && m_group != nullptr && m_group->mirrored()) {
    // The leader of a mirrored group runs every member's collectives: this mirror meets no other
    // chip during the step and only ends it with its leader, with the leader's timings.
    if (m_input != nullptr || m_output != nullptr) {
      m_error = fmt::format("{}: mirrors {} in a mirrored group but has pipeline links", name(), m_leader->name());
      return false;
    }
    while (m_leader->m_running && m_leader->error().empty()) sc_core::wait(m_leader->m_stepDone);
    if (!m_leader->error().empty()) {
      m_error = m_leader->error();
      return false;
    }
    m_timings = m_leader->m_timings;
    m_stepTime = sc_core::sc_time_stamp() - begin;
    return true;
  }
  std::size_t mirrored = 0;  // a mirror's ops copied from the leader so far
  for (std::size_t n = 0; n < m_plan->ops.size(); ++n) {
    std::size_t i = n;
    if (m_leader != nullptr) {
      // Mirror: op i ends when the leader's does; no transactions of its own. Only ops that
      // meet other chips (a collective, a pipeline send) and the last need the mirror there in
      // time; the timings of the ops before them are copied when it gets there.
      const PlannedOp& next = m_plan->ops[i];
      const bool meets = next.after.kind != PlannedCollective::Kind::kNone || next.sendNext > 0;
      if (!meets && n + 1 < m_plan->ops.size()) continue;
      while (m_leader->m_opsComputed <= i && m_leader->error().empty()) sc_core::wait(m_leader->m_opComputed);
      if (!m_leader->error().empty()) {
        m_error = m_leader->error();
        return false;
      }
      const OpTiming& led = m_leader->m_timings[i];
      if (sc_core::sc_time_stamp() > led.computeEnd) {
        // Identical chips leave each collective together: a mirror behind its leader means they
        // were not identical, and the mirrored times would be wrong.
        m_error = fmt::format("{}: mirror of {} fell behind it at layer {} op {}", name(), m_leader->name(),
                              m_plan->ops[i].layer, m_plan->ops[i].name);
        return false;
      }
      sc_core::wait(led.computeEnd - sc_core::sc_time_stamp());
      for (; mirrored <= i; ++mirrored) m_timings[mirrored] = m_leader->m_timings[mirrored];
    } else if (!awaitLoad(i)) {
      return false;
    }
    if (!m_error.empty()) return false;
    const PlannedOp& op = m_plan->ops[i];
    if (m_leader != nullptr) {
      if (!runAfter(op, i)) return false;
      continue;
    }
    if (n == 0 && m_plan->receivesFromPrevious) {
      if (m_input == nullptr) {
        m_error = "the plan waits for a previous pipeline stage but the driver has no input link";
        return false;
      }
      m_input->receive();
    }
    m_timings[i].computeStart = sc_core::sc_time_stamp();
    double queuedS = 0.0;  // of the op's compute time, waiting for a unit busy with other work
    for (const tlm::GemmShape& gemm : op.gemms) {
      if (!issue(computePort, tlm::OpKind::kGemm, 0, 0, &gemm, op, 0.0, &queuedS)) return false;
    }
    const double vectorOps = op.computeStreamVectorOps();
    if (vectorOps > 0 && !issue(computePort, tlm::OpKind::kVector, 0, 0, nullptr, op, vectorOps, &queuedS)) {
      return false;
    }
    computePort.sync();
    if (m_stack != nullptr) {
      // The stack's kernel runs its own work 1 / efficiency times as long as the units allow:
      // the op's service on them is stretched, not its wait behind another stream's work (the
      // next tile's weight conversions on the in-order vector unit), which takes what it takes.
      const double efficiency = m_stack->computeEfficiency(op.name, op.mixedInput, m_plan->expertEfficiency);
      const sc_core::sc_time elapsed = sc_core::sc_time_stamp() - m_timings[i].computeStart;
      const sc_core::sc_time own = elapsed - std::min(elapsed, sc_core::sc_time(queuedS, sc_core::SC_SEC));
      if (efficiency < 1.0) sc_core::wait(own * (1.0 / efficiency - 1.0));
    }
    m_timings[i].computeEnd = sc_core::sc_time_stamp();
    m_opsComputed = i + 1;
    m_opComputed.notify();
    if (!op.accesses.empty()) m_freeBuffers.post();
    if (!runAfter(op, i)) return false;
    m_opsDone = i + 1;
    m_opDone.notify();
  }
  m_stepTime = sc_core::sc_time_stamp() - begin;
  return true;
}

bool StepDriver::runAfter(const PlannedOp& op, std::size_t i) {
  {
    if (op.after.kind != PlannedCollective::Kind::kNone) {
      if (m_stack != nullptr && m_stack->collectiveLatencyS > 0.0) {
        sc_core::wait(sc_core::sc_time(m_stack->collectiveLatencyS, sc_core::SC_SEC));
      }
      if (m_group == nullptr) {
        m_error = fmt::format("layer {}: op {} needs a collective but the driver has no tensor-parallel group",
                              op.layer, op.name);
        return false;
      }
      if (!m_group->run(m_rank, op.after, op.layer)) {
        if (m_error.empty()) m_error = m_group->error();
        return false;
      }
    }
    if (op.sendNext > 0) {
      if (m_output == nullptr) {
        m_error = fmt::format("layer {}: op {} sends to the next pipeline stage but the driver has no output link",
                              op.layer, op.name);
        return false;
      }
      if (!m_output->send(op.sendNext, op.layer)) {
        m_error = m_output->error();
        return false;
      }
    }
    m_timings[i].collectiveEnd = sc_core::sc_time_stamp();
  }
  return true;
}

}  // namespace scoville::runtime
