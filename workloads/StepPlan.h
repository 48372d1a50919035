#pragma once
// The operations of one engine step of a transformer on one chip, derived from first principles:
// the bytes every op moves and the GEMM shapes it computes, with weights and KV cache at explicit
// HBM addresses. A step runs a batch of sequences, each feeding one token (decode) or a chunk of
// its prompt (prefill) on top of the context it already holds. Dense and mixture-of-experts
// layers, GQA and MLA attention (MLA decode in the absorbed form), sliding-window layers and
// attention sinks are planned. Pure data: the StepDriver turns a plan into TLM transactions.

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hw/chip/ChipConfig.h"
#include "hw/kv/KvBlockAllocator.h"
#include "tlm/OpTypes.h"
#include "tlm/WorkGrid.h"
#include "workloads/AttentionKernel.h"
#include "workloads/ModelConfig.h"
#include "workloads/MoeKernel.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/Speculative.h"

namespace scoville::workload {

/// One memory transaction of an op. Its tier is the chip's own HBM but for KV blocks placed off
/// the chip (spill_to_remote, offload_to_host), whose addresses are then offsets into that tier's
/// KV space (the layout of hw::KvBlockAllocator::address); the StepDriver hands those to its
/// KvFetcher.
struct MemoryAccess {
  tlm::OpKind kind = tlm::OpKind::kRead;
  uint64_t address = 0;
  uint64_t bytes = 0;
  hw::KvTier tier = hw::KvTier::kLocalHbm;
};

/// A collective the tensor-parallel group runs after an op's compute (its result feeds the next op).
struct PlannedCollective {
  enum class Kind { kNone, kAllReduce, kAllGather, kAllToAll };
  Kind kind = Kind::kNone;
  uint64_t bytes = 0;               ///< the full buffer each chip holds (see hw::expandCollective); all-to-all: the sum
  std::vector<uint64_t> sendBytes;  ///< all-to-all: bytes this chip sends to each member (itself: stays local)
};

/// One tile of the layer pipeline: memory traffic that fits one SRAM staging buffer, then the
/// GEMMs that consume it. Large weight matrices and long KV caches are split into many tiles so
/// that loading tile i+1 overlaps computing tile i, as a streaming accelerator does.
struct PlannedOp {
  std::string name;    ///< op class: "qkv_proj", "attention", ..., "lm_head"
  uint32_t layer = 0;  ///< 0-based layer; model.layers for embedding/LM head
  // Most tiles read one range and run one or two GEMMs: kept inline, not on the heap (planning a
  // step builds hundreds of tiles).
  boost::container::small_vector<MemoryAccess, 2> accesses;
  boost::container::small_vector<tlm::GemmShape, 2> gemms;
  double vectorOps = 0.0;   ///< element operations on the vector unit after the GEMMs
  double specialOps = 0.0;  ///< of vectorOps, transcendental functions (the softmax's exp)
  double convertOps = 0.0;  ///< of vectorOps, weight conversions in registers (MoeKernel convert_ops)
  /// The element operations the compute stream issues after the GEMMs: vectorOps less the
  /// conversions, which the load stream issues beside the weights' loads.
  double computeStreamVectorOps() const { return vectorOps - convertOps; }
  /// A fused kernel's (an attention kernel's, AttentionKernelConfig): its GEMMs are warp-level MMA,
  /// and its GEMMs and vector work run in the thread blocks of `grid` (shared by the kernel's tiles).
  bool warpMma = false;
  std::shared_ptr<const tlm::WorkGrid> grid;
  PlannedCollective after{};                     ///< run by the tensor-parallel group once this op has computed
  uint64_t sendNext = 0;                         ///< bytes sent to the same rank of the next pipeline stage after that
  tlm::LlmPhase phase = tlm::LlmPhase::kDecode;  ///< the phase its transactions are attributed to
  tlm::OpBlock block = tlm::OpBlock::kOther;     ///< the kind of layer it belongs to (blockOf(name))
  /// Its weights are stored narrower than the compute precision (W4A8, W4A16, W8A16): a kernel
  /// converts them in its main loop, which a software stack may run less efficiently.
  bool mixedInput = false;

  /// Bytes the op reads and writes in the chip's own HBM.
  uint64_t bytes() const;
  /// Bytes it reads and writes on `tier` (kLocalHbm: as bytes()).
  uint64_t bytesOn(hw::KvTier tier) const;
  double flops() const;
};

/// The kind of layer an op class (PlannedOp::name) belongs to.
tlm::OpBlock blockOf(const std::string& opName);

/// Appends the ops of y[rows x N] = x[rows x K] * W[K x N] (`count` such matrices side by side, as
/// a tile of experts), W at `address` stored output-major with `bits` per element: W streams in
/// tiles of whole output columns (multiples of 128) that fit `tileBytes`, each one read then its
/// GEMM, its outputs then taking `opsPerOutput` vector operations. Nothing when rows is 0. The
/// step planner plans every weight GEMM so; kernel microbenchmarks (KernelBench.h) too.
void appendWeightGemm(std::vector<PlannedOp>& ops, const char* name, uint32_t layer, tlm::LlmPhase phase,
                      uint64_t address, uint64_t k, uint64_t n, uint64_t rows, double opsPerOutput, double bits,
                      uint64_t count, double tileBytes);

/// Which slice of the model a chip computes. Tensor parallelism (Megatron-style): query heads, KV
/// heads (replicated when there are fewer than tp), FFN and expert columns and vocabulary rows
/// are split tp ways; rank r takes the r-th contiguous part (the first parts one larger when the
/// split is uneven). MLA's down-projections and latent cache are replicated on every rank.
/// Expert parallelism inside the group (ep = tp): each rank holds whole experts instead, those
/// `expertOwner` maps to it. Pipeline parallelism: stage s of pp holds the s-th contiguous run of
/// layers (the first runs one longer when uneven); stage 0 also the embedding, the last stage the
/// final norm and the LM head.
struct ModelShard {
  ModelShard(int tp = 1, int rank = 0, int pp = 1, int stage = 0, int ep = 1, std::vector<int> expertOwner = {})
      : tp(tp), rank(rank), pp(pp), stage(stage), ep(ep), expertOwner(std::move(expertOwner)) {}

  int tp = 1;
  int rank = 0;
  int pp = 1;
  int stage = 0;
  int ep = 1;                    ///< 1: experts sliced tp ways; tp: whole experts spread over the ranks
  std::vector<int> expertOwner;  ///< ep > 1: the expert-parallel rank holding each routed expert
  /// Attention data parallelism with experts spread over the replicas (tp = 1, ep = dp): this
  /// chip is expert-parallel rank `epRank`; tokens reach its experts by all-to-all dispatch and
  /// return by all-to-all combine (StepBatch::dispatchBytes).
  bool expertsAcrossReplicas = false;
  int epRank = 0;
};

/// Elements of a `total`-wide dimension rank `rank` of `parts` holds.
uint64_t shardOf(uint64_t total, int parts, int rank);

/// Tokens the queries of a chunk attend to in total: `tokens` new tokens after `context` cached
/// ones, query j (1-based) seeing min(context + j, window) tokens (window 0: unlimited).
uint64_t attendedTokens(uint64_t context, uint64_t tokens, uint64_t window);

/// One sequence's part of a step.
struct StepSequence {
  uint64_t request = 0;
  uint64_t context = 0;  ///< tokens in its KV cache before the step
  uint64_t tokens = 1;   ///< tokens it feeds: 1 decoding, a prompt chunk prefilling
  bool samples = true;   ///< the step produces one of its output tokens (decode, last prompt chunk)
  /// Offset of its first KV byte (stage's first layer) in the chip's KV region: every chip of a
  /// replica gets the same batch and adds its own planner's kvBase().
  uint64_t kvAddress = 0;
  /// Speculative decoding: draft tokens it verifies (it then feeds 1 + verify tokens, all sampled),
  /// how many of them the target accepts (drawn when the step was composed), and the draft tokens
  /// the draft proposes for its next step after this one (0: none; workloads/Speculative.h).
  uint32_t verify = 0;
  uint32_t accepted = 0;
  uint32_t propose = 0;

  /// True when it decodes: its last token plus any drafts on its cached context.
  bool decodes() const { return tokens == 1 + verify; }
  /// Positions the step samples for it (1 + verify, or 0 when it does not sample).
  uint64_t sampled() const { return samples ? 1 + verify : 0; }
};

/// What one step runs on a chip.
struct StepBatch {
  std::vector<StepSequence> sequences;
  /// Bytes from one layer's KV region to the next: a sequence's KV of stage layer i starts at
  /// kvBase + kvAddress + (i mod kvLayerRegions) x kvLayerStride.
  uint64_t kvLayerStride = 0;
  /// Layer regions of the KV space (0: one per stage layer). A cache whose sliding-window layers
  /// keep only their window holds fewer regions than layers; the window layers' streams then
  /// share them (their blocks are placed like those of the other layers).
  uint32_t kvLayerRegions = 0;
  /// Tokens routed to each expert, [model layer][routed expert] (empty rows for dense layers);
  /// required for a mixture-of-experts model. Every rank of a group gets the same routing.
  const std::vector<std::vector<uint64_t>>* expertTokens = nullptr;
  /// Experts across replicas: [model layer][member] bytes this chip dispatches to each member's
  /// experts (tokens x experts routed there x hidden activations) and gets back in the combine;
  /// expertTokens then holds the tokens this chip's experts receive from all members.
  const std::vector<std::vector<uint64_t>>* dispatchBytes = nullptr;
  const std::vector<std::vector<uint64_t>>* combineBytes = nullptr;
  /// Off-chip KV placement: the cache whose block tables say which tier each sequence's tokens
  /// are on (reads and appends of blocks off the chip then go to that tier). Null: all in local HBM.
  const hw::KvBlockAllocator* kv = nullptr;

  uint64_t tokens() const;
};

struct StepPlan {
  std::vector<PlannedOp> ops;
  ModelShard shard;
  /// The first op waits for the previous pipeline stage's activations (every stage but the first).
  bool receivesFromPrevious = false;
  tlm::Precision computePrecision = tlm::Precision::kBf16;
  /// The routed experts' kernel's own compute efficiency (MoeKernelConfig::efficiency), which a
  /// software stack applies in place of its moe_efficiency; 0: the stack's.
  double expertEfficiency = 0.0;
  uint64_t batch = 0;            ///< sequences in the step
  uint64_t tokens = 0;           ///< tokens the step feeds
  double weightBytes = 0.0;      ///< bytes of the weights this chip holds
  double kvBytes = 0.0;          ///< bytes of this chip's KV cache of the step's sequences after the step
  double collectiveBytes = 0.0;  ///< bytes of all collective buffers (per chip) the step reduces or gathers
  double bytesMoved = 0.0;       ///< all bytes the step reads and writes in the chip's HBM
  double remoteKvBytes = 0.0;    ///< KV bytes it reads and writes in another chip's HBM (spill_to_remote)
  double hostKvBytes = 0.0;      ///< KV bytes it reads and writes in host memory (offload_to_host)
  double flops = 0.0;            ///< all FLOPs of the step's GEMMs
  double vectorOps = 0.0;        ///< all element operations of the step (norms, softmax, activations)
  double convertOps = 0.0;       ///< of vectorOps, the weight conversions (PlannedOp::convertOps)
  double expertTokens = 0.0;     ///< tokens x experts this chip computed (mixture of experts)
  /// Switching activity of the data the step moves relative to random data (tlm::OpExtension::
  /// dataToggle): 1 for weights, activations and KV; a kernel filling memory with a constant, 0.
  double dataToggle = 1.0;
  /// Speculative decoding: the last draftOps ops are the draft's passes (named "draft.<op>"),
  /// after the verification.
  std::size_t draftOps = 0;

  /// Appends a draft pass's plan (its ops renamed "draft.<op>" and counted in draftOps, its
  /// traffic, FLOPs and expert tokens added).
  void appendDraft(StepPlan&& pass);

  /// Roofline lower bounds of the step on `chip`.
  double memoryBoundS(const hw::ChipConfig& chip) const { return bytesMoved / chip.hbm.bandwidthBytesPerS; }
  double computeBoundS(const hw::ChipConfig& chip) const { return flops / chip.tensorCore.peakFlops(computePrecision); }
};

/// Plans steps of one chip's shard of a model. Construction lays the shard's weights out in HBM
/// from address 0 (each tensor on a 4 KiB boundary, stored output-major so a tile of output
/// columns is one contiguous read; experts of a layer back to back in expert order); the KV
/// cache goes above them (kvBase()). Tiles hold at most chip.sram.bufferBytes().
///
/// Per layer a step runs: norm; the attention projections (GQA: one QKV GEMM; MLA: query down
/// and up projections, KV down-projection); attention over each sequence's real context (the
/// window on sliding layers), reading the cached KV and appending the new tokens' (MLA decodes in
/// the absorbed form over the latent, prefills by decompressing K and V); the output projection;
/// norm; the FFN (dense; or router, the routed experts with the tokens the routing gives them,
/// and the shared experts). Then the final norm, the LM head and sampling for the sequences that
/// sample. Under tp > 1 the embedding, attention and FFN outputs are all-reduced (tokens x hidden
/// activations) and the LM head's per-rank best tokens all-gathered.
class StepPlanner {
 public:
  /// Throws ConfigError kInvalidConfig when the chip cannot compute in the model's precision,
  /// heads or experts do not split tp ways, pp exceeds the layers, or ep is neither 1 nor tp;
  /// kDoesNotFit when the smallest weight tile exceeds a staging buffer.
  StepPlanner(const ModelConfig& model, const hw::ChipConfig& chip, ModelShard shard);
  /// A speculative-decoding draft's planner (workloads/Speculative.h): its weights from
  /// draft.weightBase (the shared embedding and LM head not held again), the projection of
  /// [embedding; hidden] before its layers when draft.inputProjection > 0 (replicated on every
  /// rank), its layer i's KV in region draft.kvRegionOffset + i of the target's KV space. Needs
  /// pp 1. setKvBase() then puts both planners' KV above its weights.
  StepPlanner(const ModelConfig& model, const hw::ChipConfig& chip, ModelShard shard, const DraftLayout& draft);

  /// Plans GQA attention as `kernel` lays it out (padded query and KV blocks, thread blocks on the
  /// chip's SMs, flash-decoding): a software stack's or a kernel dataset's. nullopt: exact GEMMs.
  /// MLA attention is planned as before either way.
  void setAttentionKernel(std::optional<AttentionKernelConfig> kernel) { m_attentionKernel = std::move(kernel); }
  const std::optional<AttentionKernelConfig>& attentionKernel() const { return m_attentionKernel; }
  /// Plans the routed experts' GEMMs as `kernel` runs them (each expert's tokens padded to its
  /// tiles' rows, MoeKernel.h): the software stack's kernel for the model's expert precision.
  /// nullptr: exact GEMMs. Copied. A kernel that stores the experts padded (hidden_align,
  /// inner_align) lays the weights out again, so set it before reading any address or size.
  void setMoeKernel(const MoeKernelConfig* kernel);
  const std::optional<MoeKernelConfig>& moeKernel() const { return m_moeKernel; }

  /// Moves the KV space to `address` (at least the first address above the weights): a target's
  /// to above its draft's weights.
  void setKvBase(uint64_t address);
  /// First address above the weights (kvBase() until setKvBase moves it).
  uint64_t weightEnd() const { return m_weightEnd; }
  /// Addresses of the embedding and LM head (a draft may share them).
  uint64_t embeddingAddress() const { return m_embedding; }
  uint64_t lmHeadAddress() const { return m_lmHead; }

  /// Plans one step. Throws std::invalid_argument for a mixture-of-experts model without routing.
  StepPlan plan(const StepBatch& batch) const;
  /// True when `other` plans every batch exactly as this planner does: same model slice, same
  /// weight layout, same chip type (the plan is a function of these and the batch alone).
  bool plansLike(const StepPlanner& other) const;

  const ModelConfig& model() const { return m_model; }
  const hw::ChipConfig& chip() const { return m_chip; }
  const ModelShard& shard() const { return m_shard; }
  /// Bytes of the weights this chip holds (scales included).
  double weightBytes() const { return static_cast<double>(m_weightBytes); }
  /// First HBM address above the weights.
  uint64_t kvBase() const { return m_kvBase; }
  /// KV bytes one token adds in one layer on this chip.
  uint64_t kvBytesPerTokenPerLayer() const { return m_kvPerTokenLayer; }
  /// Layers of this chip's stage: [firstLayer(), firstLayer() + stageLayers()).
  uint32_t firstLayer() const { return m_firstLayer; }
  uint32_t stageLayers() const { return m_stageLayers; }
  /// Stage layers that attend to a sliding window (their KV is needed for the window only).
  uint32_t kvWindowLayers() const { return m_windowLayers; }
  /// KV bytes a sequence of `tokens` tokens holds on this chip: every token in the other layers,
  /// the last window's in the window layers (every token in all when every layer has a window,
  /// as the serving cache keeps them).
  uint64_t kvBytesFor(uint64_t tokens) const;

 private:
  struct LayerWeights {
    uint64_t qkv = 0;                // GQA: Q, K, V (and biases); MLA: query up-projection
    uint64_t qDown = 0, kvDown = 0;  // MLA
    uint64_t kvUp = 0;               // MLA: per-head K (no RoPE) and V up-projection
    uint64_t o = 0;
    uint64_t up = 0, down = 0;  // dense FFN or shared experts
    uint64_t router = 0;
    std::vector<uint64_t> experts;  // routed experts this chip holds, by expert (~0 for others)
  };
  class Builder;

  uint64_t take(uint64_t bytes);
  /// Lays the shard's weights out (a draft's after its target's, see DraftLayout).
  void layOut(const DraftLayout* draft);

  ModelConfig m_model;
  hw::ChipConfig m_chip;
  ModelShard m_shard;
  uint32_t m_firstLayer = 0;
  uint32_t m_stageLayers = 0;
  uint32_t m_windowLayers = 0;  // of the stage's layers, those with a sliding window
  bool m_firstStage = true;
  bool m_lastStage = true;
  // This rank's slice.
  uint64_t m_qHeads = 0, m_kvHeads = 0;  // GQA heads (MLA: query heads only)
  uint64_t m_ffnInter = 0;               // dense FFN columns
  uint64_t m_expertInter = 0;            // columns of each routed expert this chip holds (as stored)
  uint64_t m_expertHidden = 0;           // the routed experts' hidden width as stored (hidden_align)
  uint64_t m_sharedInter = 0;            // shared-expert columns (all shared experts together)
  uint64_t m_vocab = 0;
  uint64_t m_kvPerTokenLayer = 0;
  uint64_t m_expertBytes = 0;  // one routed expert's slice: gate + up, then down
  uint64_t m_expertUpBytes = 0;
  uint64_t m_embedding = 0, m_lmHead = 0;
  std::vector<LayerWeights> m_layers;  // stage layers
  uint64_t m_next = 0;
  uint64_t m_weightBytes = 0;
  uint64_t m_kvBase = 0;
  uint64_t m_weightEnd = 0;
  // A draft's: KV region offset and the [embedding; hidden] projection (address, K).
  uint32_t m_kvRegionOffset = 0;
  uint64_t m_inputProjection = 0;
  uint64_t m_inputProjectionK = 0;
  std::optional<DraftLayout> m_draftLayout;  // a draft's place beside its target (absent: not a draft)
  std::optional<AttentionKernelConfig> m_attentionKernel;
  std::optional<MoeKernelConfig> m_moeKernel;
};

}  // namespace scoville::workload
