#pragma once
// Issues StepPlans to a chip as TLM-2.0 transactions, one step after another, and records when
// each op of the current step ran.
//
// Under tensor parallelism the compute stream also runs the collective that follows an op (see
// CollectiveGroup) before it starts the next op, while the load stream keeps prefetching. Under
// pipeline parallelism it waits for the previous stage's activations before its first op and
// sends its own to the next stage after its last (see PipelineLink).
//
// Two SC_THREADs model the chip's two streams. The load stream is a DMA engine: it sends each
// tile's memory transactions in order without waiting for their data (those of KV blocks placed
// off the chip go through its KvFetcher, and it waits for them); the compute stream awaits a
// tile's responses, then runs its GEMMs and its vector work (norms, softmax, activation).
// They share the chip's SRAM staging buffers: the load stream takes a free buffer before it
// sends a tile's requests, the compute stream frees it when the tile's GEMMs are done (with two
// buffers, tile i+1's data streams in while tile i computes, and its requests queue on each HBM
// channel behind tile i's). The step time thus emerges from the memory controller and tensor
// core timing and their overlap, never from arithmetic here.

#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/chip/ChipConfig.h"
#include "runtime/CollectiveGroup.h"
#include "runtime/PipelineLink.h"
#include "tlm/InitiatorPort.h"
#include "tlm/PayloadPool.h"
#include "tlm/TimingMode.h"
#include "workloads/SoftwareStack.h"
#include "workloads/StepPlan.h"

namespace scoville::runtime {

using workload::PlannedOp;
using workload::SoftwareStackConfig;
using workload::StepPlan;

class KvFetcher;

class StepDriver : public sc_core::sc_module {
 public:
  /// Loosely-timed quantum of each stream.
  static constexpr double kQuantumS = 1e-6;

  /// The load stream's and the compute stream's ports; bind both to the chip.
  tlm::InitiatorPort loadPort;
  tlm::InitiatorPort computePort;

  struct OpTiming {
    sc_core::sc_time loadStart, loadEnd, computeStart, computeEnd;
    sc_core::sc_time collectiveEnd;  ///< end of the collective and pipeline send after the op (or computeEnd)
  };

  /// chip: its staging buffers, shared by the two streams (sram.staging_buffers), how the load
  /// stream issues their requests (sram.load_issue), and whether its command processor launches
  /// kernels (command_processor.kernel_launch). The driver runs `plan` from time zero; without a
  /// plan it waits for post().
  StepDriver(const sc_core::sc_module_name& name, StepPlan plan, const hw::ChipConfig& chip, tlm::TimingMode mode);
  StepDriver(const sc_core::sc_module_name& name, const hw::ChipConfig& chip, tlm::TimingMode mode);
  StepDriver(const StepDriver&) = delete;
  StepDriver& operator=(const StepDriver&) = delete;

  /// Makes this driver rank `rank` of `group`: the plan's collectives run there. Without a group
  /// the plan must have none (tp = 1).
  void joinGroup(CollectiveGroup& group, int rank) {
    m_group = &group;
    m_rank = rank;
  }

  /// Pipeline neighbours: `input` delivers the previous stage's activations (needed when the plan
  /// receivesFromPrevious), `output` carries ops' sendNext bytes to the next stage.
  void linkStages(PipelineLink* input, PipelineLink* output) {
    m_input = input;
    m_output = output;
  }

  /// A software-stack profile (null: none): stretches each op's compute and each tile's loads by
  /// its efficiencies, delays each collective by its latency and, with a kernel launch latency,
  /// runs the step's kernels one after another (see SoftwareStack.h).
  void setStack(const SoftwareStackConfig* stack) { m_stack = stack; }

  /// Off-chip KV placement: accesses of a plan on a tier other than local HBM go to `fetcher`
  /// (a step that has some fails without one).
  void attachFetcher(KvFetcher* fetcher) { m_fetcher = fetcher; }

  PipelineLink* input() const { return m_input; }
  PipelineLink* output() const { return m_output; }

  /// Starts the next step now. The previous step must have finished (idle()); call from a process.
  ///
  /// With a `leader` (a driver posted the same plan at the same time, on a chip of the same
  /// configuration whose memory, tensor cores and vector unit have seen exactly the same
  /// transactions as this one's, step after step), this driver mirrors it: it issues no memory or
  /// compute transactions, its ops end when the leader's do (they would, to the picosecond: the
  /// same transactions on identical state at identical times), and it runs its own collectives
  /// and pipeline sends on the fabric. Only the caller can know the chips' histories are
  /// identical; ReplicaBuilder checks it. The mirror's chip modules then count none of the step's
  /// traffic.
  void post(std::shared_ptr<const StepPlan> plan, const StepDriver* leader = nullptr);
  /// True when no step is running.
  bool idle() const { return !m_running; }
  /// Notified when a step has finished.
  const sc_core::sc_event& stepDone() const { return m_stepDone; }

  /// The current (or last) step's plan and op timings.
  const StepPlan& plan() const { return *m_plan; }
  /// The posted plan, for a mirror to share instead of copying it.
  const std::shared_ptr<const StepPlan>& sharedPlan() const { return m_plan; }
  const std::vector<OpTiming>& timings() const { return m_timings; }
  /// True once every op of the last posted step has computed (and at least one step was posted).
  bool finished() const { return m_steps > 0 && !m_running; }
  /// The last step's time from its start to its last compute (and collective).
  sc_core::sc_time stepTime() const { return m_stepTime; }
  /// Non-empty when a target answered with an error response; the run is then invalid.
  const std::string& error() const { return m_error; }

 private:
  void loadStream();
  void computeStream();
  /// Computes the posted step's ops in order; false on an error.
  bool runStep();
  /// Runs what follows op i's compute: its collective and its pipeline send.
  bool runAfter(const PlannedOp& op, std::size_t i);
  /// Sends a transaction and waits for its response; false (error() set) on an error response.
  /// `queuedS`, when given, gains the time the transaction waited for its unit (OpExtension::queuedS).
  bool issue(tlm::InitiatorPort& port, tlm::OpKind kind, uint64_t address, uint64_t bytes, const tlm::GemmShape* gemm,
             const PlannedOp& planned, double elementOps = 0.0, double* queuedS = nullptr);
  /// A payload from the pool (ref count 1) for one of `planned`'s transactions. A vector op's
  /// `elementOps` are the compute stream's (its softmax exps among them) or, with `converting`,
  /// the weight conversions the load stream issues beside the tile's loads.
  ::tlm::tlm_generic_payload& prepare(tlm::OpKind kind, uint64_t address, uint64_t bytes, const tlm::GemmShape* gemm,
                                      const PlannedOp& planned, double elementOps = 0.0, bool converting = false);
  /// True for an OK response; otherwise sets error() (the first error wins).
  bool checkResponse(const ::tlm::tlm_generic_payload& payload, const PlannedOp& planned);
  /// Compute stream: waits until op i's requests are sent and their data is in (loadEnd).
  bool awaitLoad(std::size_t i);
  /// Awaits op i's requests still in flight, raising its loadEnd to their responses.
  bool awaitResponses(std::size_t i);

  std::shared_ptr<const StepPlan> m_plan = std::make_shared<const StepPlan>();
  std::vector<OpTiming> m_timings;
  /// A request the load stream sent for op `op`, whose response the compute stream awaits.
  struct InFlight {
    std::size_t op;
    ::tlm::tlm_generic_payload* payload;
  };
  std::vector<InFlight> m_inFlight;  // in op order; [m_inFlightHead, end) not yet awaited
  std::size_t m_inFlightHead = 0;
  std::size_t m_opsSent = 0;  // ops of the current step whose requests are all sent
  sc_core::sc_event m_opSent;
  /// Software stack below full memory efficiency: the last loaded tile's data as the memory
  /// system delivered it, and as the stack sees it (stretched).
  sc_core::sc_time m_rawLoadEnd, m_stretchedLoadEnd;
  sc_core::sc_semaphore m_freeBuffers;  // staging buffers not holding a tile
  const hw::LoadIssue m_loadIssue;
  const bool m_chipLaunches;  // the chip's command processor launches kernels (a launch gap)
  tlm::PayloadPool m_pool;
  const StepDriver* m_leader = nullptr;  // the driver this step mirrors, if any
  std::size_t m_opsComputed = 0;         // ops of the current step whose compute has ended
  sc_core::sc_event m_opComputed;        // notified at each op's compute end
  std::size_t m_opsDone = 0;             // ops of the current step whose compute and collective have ended
  sc_core::sc_event m_opDone;            // notified at each op's end (compute and collective)
  bool m_running = false;                // a step is posted and its compute has not finished
  bool m_loadPending = false;            // the load stream has not started the posted step
  uint64_t m_steps = 0;
  sc_core::sc_event m_posted;
  sc_core::sc_event m_stepDone;
  sc_core::sc_time m_stepTime;
  std::string m_error;
  CollectiveGroup* m_group = nullptr;
  PipelineLink* m_input = nullptr;
  PipelineLink* m_output = nullptr;
  KvFetcher* m_fetcher = nullptr;
  const SoftwareStackConfig* m_stack = nullptr;
  int m_rank = 0;
};

}  // namespace scoville::runtime
