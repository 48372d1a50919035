#pragma once
// A software-stack profile: what a serving framework (TensorRT-LLM, vLLM, SGLang) achieves on a
// platform, relative to the hardware the modules model. Real kernels reach only part of peak, and
// every engine step and collective costs host and launch time; a profile says how much, per op
// class, once per framework and hardware, so that no data point gets a fudge factor of its own.
//
// Chosen by the scenario key `software_stack` (a name in workloads/stacks/ or a file); absent, the
// run is the hardware's alone (every efficiency 1, no overhead). How it acts (StepDriver,
// CollectiveGroup, ReplicaRunner):
//   - compute: an op's compute (its GEMMs and vector work, as the tensor core and vector unit
//     time them, less any wait for a unit busy with another stream's work: the next tile's weight
//     conversions) is stretched to time / efficiency of its class: `attention_efficiency` for the
//     attention kernel (scores and values over the KV cache), `moe_efficiency` for the routed
//     experts' grouped GEMMs, `gemm_efficiency` for every other op (projections, FFN, shared
//     experts, LM head, norms); a weight GEMM whose weights are stored narrower than the compute
//     precision (PlannedOp::mixedInput: W4A8, W4A16) is further stretched by
//     `mixed_input_efficiency`;
//   - memory: a tile's loads (as the memory controller times them) are stretched to time /
//     `memory_efficiency`;
//   - each collective starts `collective_latency` late (the library's launch and synchronisation);
//   - each engine step starts `step_overhead` late (scheduling, batch preparation, launch), on
//     top of scheduler.step_overhead;
//   - each request reaches the scheduler `request_overhead` + `request_overhead_per_token` x its
//     prompt tokens after it was sent (ServingFrontEnd): the front end's path (HTTP, tokenisation,
//     hand-over to the engine, and the first token's way back, which shifts every token of the
//     request alike and so is folded in here); TTFT and E2E include it, TPOT does not;
//   - `attention_kernel`: the step planners lay GQA attention out as that kernel does (padded
//     query and KV blocks, its thread blocks scheduled on the chip's SMs, warp MMA, flash-decoding;
//     workloads/AttentionKernel.h), which the chip's modules then time;
//   - `moe_kernels`: the first that serves the model's expert precision runs the routed experts,
//     each expert's tokens padded to its tiles' rows, weights narrower than the compute converted
//     on the vector unit while they load, and its own `efficiency` (when set) in place of
//     `moe_efficiency` (workloads/MoeKernel.h);
//   - with `kernel_launch` > 0 the step runs as kernels launched one after another on one stream,
//     as a GPU does: a kernel (the consecutive tiles of one op class of one layer) starts
//     `kernel_launch` after the previous kernel and the collective after it have ended, and its
//     loads wait for that start (no prefetching across kernels). 0: tiles stream across op
//     boundaries, as a dataflow engine's DMA does.
// The stretch is idle time of the unit: it draws static power only.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/Schema.h"
#include "workloads/AttentionKernel.h"
#include "workloads/MoeKernel.h"

namespace scoville::workload {

struct SoftwareStackConfig {
  std::string name;
  std::string description;
  std::string framework;  ///< the framework it stands for, as published
  std::string hardware;   ///< the hardware it was calibrated on
  double gemmEfficiency = 1.0;
  double attentionEfficiency = 1.0;
  double moeEfficiency = 1.0;
  double memoryEfficiency = 1.0;
  double mixedInputEfficiency = 1.0;  ///< multiplies an op's compute efficiency when its weights are converted
  double collectiveLatencyS = 0.0;
  double stepOverheadS = 0.0;
  double kernelLaunchS = 0.0;             ///< 0: no kernel boundaries (tiles stream across ops)
  double requestOverheadS = 0.0;          ///< front end, per request: sent -> at the scheduler
  double requestOverheadPerTokenS = 0.0;  ///< front end, per prompt token (tokenisation)
  std::vector<std::string> calibratedOn;  ///< validation point ids its values were fitted to
  /// The stack's attention kernel, as the step planners lay GQA attention out (AttentionKernel.h);
  /// absent: exact GEMMs spread evenly over the arrays.
  std::optional<AttentionKernelConfig> attentionKernel;
  /// The routed experts' grouped-GEMM kernels (MoeKernel.h), by the expert precisions they serve;
  /// none: exact GEMMs.
  std::vector<MoeKernelConfig> moeKernels;

  /// The kernel that runs experts stored at precision `p`: the first of moe_kernels that serves
  /// it; none: nullptr.
  const MoeKernelConfig* moeKernelFor(tlm::Precision p) const;

  /// The compute efficiency of an op class (PlannedOp::name).
  double computeEfficiency(const std::string& opName) const;
  /// The compute efficiency of an op: its class's, times mixed_input_efficiency when its weights
  /// are stored narrower than the compute precision.
  /// `expertKernel`: the routed experts' kernel's own efficiency (StepPlan::expertEfficiency),
  /// which replaces moe_efficiency for them when above 0.
  double computeEfficiency(const std::string& opName, bool mixedInput, double expertKernel = 0.0) const {
    const double base = expertKernel > 0.0 && opName == "experts" ? expertKernel : computeEfficiency(opName);
    return base * (mixedInput ? mixedInputEfficiency : 1.0);
  }
  /// True when the profile changes nothing.
  bool ideal() const;
  /// The profile as a report echoes it (report.json inputs.software_stack), named `givenAs` on the
  /// command line or in the scenario.
  nlohmann::ordered_json toJson(const std::string& givenAs) const;
  /// True when op `i` of `ops` starts a kernel (its class or layer differs from op i - 1's).
  template <typename Ops>
  static bool startsKernel(const Ops& ops, std::size_t i) {
    return i == 0 || ops[i].name != ops[i - 1].name || ops[i].layer != ops[i - 1].layer;
  }

  static const config::Schema<SoftwareStackConfig>& schema();
};

}  // namespace scoville::workload
