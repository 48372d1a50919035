// The plans that run a kernel dataset's kernels on a simulated chip (workloads/KernelBench.h):
// each is laid out by the code serving runs use, so the comparison speaks for them.
#include <fmt/format.h>
#include <algorithm>
#include <string>
#include <vector>

#include "config/ConfigError.h"
#include "workloads/KernelBench.h"
#include "workloads/ModelConfig.h"
#include "workloads/Routing.h"
#include "workloads/StepPlanSizes.h"

namespace scoville::workload {

using config::ConfigError;
using config::ErrorKind;

namespace {

uint64_t u64(int64_t v) {
  return static_cast<uint64_t>(v);
}

/// Refuses a kernel whose `what` precision `p` chip type `chip` has no tensor-core rate for.
void requireTensorCore(const MeasuredKernel& k, const hw::ChipConfig& chip, tlm::Precision p, const char* what) {
  if (chip.tensorCore.macsPerCell.of(p) <= 0) {
    throw ConfigError(
        ErrorKind::kInvalidConfig, "kernels." + k.id,
        fmt::format("kernel '{}' {} {}, which chip type '{}' cannot", k.id, what, tlm::precisionName(p), chip.name));
  }
}

/// Fills a plan's totals from its ops (as the step planner does).
void total(StepPlan& plan) {
  for (const PlannedOp& op : plan.ops) {
    plan.bytesMoved += static_cast<double>(op.bytes());
    plan.flops += op.flops();
    plan.vectorOps += op.vectorOps;
    plan.convertOps += op.convertOps;
  }
}

/// `bytes` of a streaming kernel as tiles of one staging buffer each, at `address` upwards.
/// Tile i goes to op i (a copy's read and write streams share the ops), appended as needed.
void streamTiles(StepPlan& plan, tlm::OpKind kind, uint64_t address, uint64_t bytes, double tileBytes) {
  const auto tile = static_cast<uint64_t>(tileBytes);
  std::size_t op = 0;
  for (uint64_t done = 0; done < bytes; done += tile, ++op) {
    if (op == plan.ops.size()) {
      plan.ops.emplace_back();
      plan.ops.back().name = "kernel";
      plan.ops.back().block = blockOf("kernel");
    }
    plan.ops[op].accesses.push_back(MemoryAccess{kind, address + done, std::min(tile, bytes - done)});
  }
}

/// A one-layer GQA model whose attention is the kernel's: `heads` query heads over `kvHeads` KV
/// heads of `headDim`, in `precision`. Its other layers are as small as the planner allows; the
/// caller keeps the attention ops alone.
ModelConfig attentionModel(const MeasuredKernel& k) {
  ModelConfig m;
  m.name = "kernel " + k.id;
  m.family = ModelFamily::kDense;
  m.layers = 1;
  m.hidden = static_cast<int>(k.heads * k.headDim);
  m.vocab = 128;
  m.attention = AttentionKind::kGqa;
  m.qHeads = static_cast<int>(k.heads);
  m.kvHeads = static_cast<int>(k.kvHeadCount());
  m.headDim = static_cast<int>(k.headDim);
  m.ffnIntermediate = 128;
  m.weightPrecision = k.precision;
  m.computePrecision = k.precision;
  m.kvPrecision = k.precision;
  return m;
}

/// The seed of a moe kernel's routing.
constexpr uint64_t kMoeKernelSeed = 1;

/// A one-layer mixture-of-experts model whose routed experts are the kernel's: `experts` of hidden
/// width k and inner width n (gated), stored in `precision` with the kernel's scales, computed in
/// `computePrecision`. Its attention is as small as the planner allows; the caller keeps the
/// experts' ops alone.
ModelConfig moeModel(const MeasuredKernel& k) {
  ModelConfig m;
  m.name = "kernel " + k.id;
  m.family = ModelFamily::kMoe;
  m.layers = 1;
  m.hidden = static_cast<int>(k.k);
  m.vocab = 128;
  m.attention = AttentionKind::kGqa;
  m.qHeads = 1;
  m.kvHeads = 1;
  m.headDim = 64;
  m.gatedFfn = true;
  m.routedExperts = static_cast<int>(k.experts);
  m.expertsPerToken = static_cast<int>(k.topK);
  m.moeIntermediate = static_cast<int>(k.n);
  m.weightPrecision = k.computePrecision;
  m.expertWeights = WeightFormat{k.precision, static_cast<int>(k.scaleBlock), static_cast<int>(k.scaleBits)};
  m.computePrecision = k.computePrecision;
  m.kvPrecision = k.computePrecision;
  return m;
}

}  // namespace

StepPlan planKernel(const MeasuredKernel& k, const hw::ChipConfig& chip,
                    const std::optional<AttentionKernelConfig>& attention, const MoeKernelConfig* moeKernel) {
  StepPlan plan;
  plan.batch = u64(k.batch);
  const double tile = chip.sram.bufferBytes();
  if (isHbmKind(k.kind)) {
    const auto bytes = static_cast<uint64_t>(k.bytes);
    plan.dataToggle = k.constantData ? 0.0 : 1.0;
    if (k.kind == KernelKind::kHbmCopy) {
      // Half read from [0, bytes / 2), half written above: each tile reads and writes its share.
      const uint64_t half = bytes / 2;
      const double part = tile / 2;
      streamTiles(plan, tlm::OpKind::kRead, 0, half, part);
      streamTiles(plan, tlm::OpKind::kWrite, planning::aligned(half), bytes - half, part);
    } else {
      streamTiles(plan, k.kind == KernelKind::kHbmRead ? tlm::OpKind::kRead : tlm::OpKind::kWrite, 0, bytes, tile);
    }
    if (k.kind == KernelKind::kHbmRead) {
      // A read kernel consumes what it reads (a reduction): one element operation per element.
      const double bytesPerElement = tlm::bitsPerElement(k.precision) / 8.0;
      for (PlannedOp& op : plan.ops) op.vectorOps = static_cast<double>(op.bytes()) / bytesPerElement;
    }
  } else if (k.kind == KernelKind::kGemm) {
    requireTensorCore(k, chip, k.precision, "multiplies in");
    plan.computePrecision = k.precision;
    plan.tokens = u64(k.m);
    appendWeightGemm(plan.ops, "kernel", 0, k.m > 1 ? tlm::LlmPhase::kPrefill : tlm::LlmPhase::kDecode, 0, u64(k.k),
                     u64(k.n), u64(k.m), 0.0, tlm::bitsPerElement(k.precision), 1, tile);
  } else if (k.kind == KernelKind::kMoe) {
    requireTensorCore(k, chip, k.computePrecision, "computes in");
    const ModelConfig model = moeModel(k);
    StepPlanner planner(model, chip, ModelShard{});
    planner.setMoeKernel(moeKernel != nullptr && moeKernel->serves(k.precision) ? moeKernel : nullptr);
    // Routed as a benchmark's random router scores route them: each token to top_k distinct
    // experts, uniformly at random (one seeded stream: the same counts every run). A few tokens
    // touch fewer experts than an even spread would.
    std::vector<std::vector<uint64_t>> routing(1, std::vector<uint64_t>(u64(k.experts)));
    makeRoutingModel(RoutingConfig{}, static_cast<int>(k.experts), static_cast<int>(k.topK), kMoeKernelSeed)
        ->route(0, u64(k.m), routing[0]);
    StepBatch batch;
    batch.sequences.push_back(StepSequence{1, 0, u64(k.m), true, 0});
    batch.kvLayerStride = (u64(k.m) + 1) * planner.kvBytesPerTokenPerLayer();
    batch.expertTokens = &routing;
    StepPlan full = planner.plan(batch);
    plan.computePrecision = full.computePrecision;
    plan.tokens = full.tokens;
    plan.expertEfficiency = full.expertEfficiency;
    plan.expertTokens = full.expertTokens;
    for (PlannedOp& op : full.ops) {
      if (op.name == "experts" || op.name == "moe_combine") plan.ops.push_back(std::move(op));
    }
  } else {
    const ModelConfig model = attentionModel(k);
    StepPlanner planner(model, chip, ModelShard{});
    planner.setAttentionKernel(attention);
    StepBatch batch;
    const bool decode = k.kind == KernelKind::kAttentionDecode;
    const uint64_t perSequence = (u64(k.context) + 1) * planner.kvBytesPerTokenPerLayer();
    for (int64_t s = 0; s < k.batch; ++s) {
      batch.sequences.push_back(StepSequence{u64(s) + 1, decode ? u64(k.context) : 0, decode ? 1 : u64(k.context), true,
                                             u64(s) * perSequence});
    }
    batch.kvLayerStride = perSequence * u64(k.batch);
    StepPlan full = planner.plan(batch);
    plan.computePrecision = full.computePrecision;
    plan.tokens = full.tokens;
    // The kernel computes whole query blocks: a decode's few query rows per KV head are padded to
    // the block, on the tensor core and in the softmax alike.
    const auto block = static_cast<uint64_t>(k.queryBlock);
    for (PlannedOp& op : full.ops) {
      if (op.name != "attention" && op.name != "attention_combine") continue;
      if (block > 1 && !attention) {
        double padding = 1.0;
        for (tlm::GemmShape& g : op.gemms) {
          const uint64_t padded = planning::roundUp(g.m, block);
          padding = static_cast<double>(padded) / static_cast<double>(g.m);
          g.m = padded;
        }
        op.vectorOps *= padding;
        op.specialOps *= padding;
      }
      plan.ops.push_back(std::move(op));
    }
  }
  total(plan);
  return plan;
}

std::string kernelClass(const MeasuredKernel& k, const StepPlan& plan, const hw::ChipConfig& chip) {
  if (isHbmKind(k.kind)) return "hbm";
  if (k.kind == KernelKind::kGemm) {
    const bool memory = plan.memoryBoundS(chip) >= plan.computeBoundS(chip);
    return "gemm_" + tlm::precisionName(k.precision) + (memory ? "_memory" : "_compute");
  }
  if (k.kind == KernelKind::kMoe) {
    const bool memory = plan.memoryBoundS(chip) >= plan.computeBoundS(chip);
    return "moe_" + tlm::precisionName(k.precision) + (memory ? "_memory" : "_compute");
  }
  return kernelKindName(k.kind);
}

}  // namespace scoville::workload
