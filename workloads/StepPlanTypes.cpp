// The plan's value types and the counting helpers the planner and its tests share (separate
// from the planner itself, StepPlan.cpp).
#include "workloads/StepPlan.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace scoville::workload {

tlm::OpBlock blockOf(const std::string& opName) {
  static const std::map<std::string, tlm::OpBlock> kBlocks{
      {"embedding", tlm::OpBlock::kEmbedding},
      {"norm", tlm::OpBlock::kAttention},
      {"qkv_proj", tlm::OpBlock::kAttention},
      {"q_down", tlm::OpBlock::kAttention},
      {"q_up", tlm::OpBlock::kAttention},
      {"kv_down", tlm::OpBlock::kAttention},
      {"kv_up", tlm::OpBlock::kAttention},
      {"v_absorb", tlm::OpBlock::kAttention},
      {"attention", tlm::OpBlock::kAttention},
      {"o_proj", tlm::OpBlock::kAttention},
      {"attention_combine", tlm::OpBlock::kAttention},
      {"ffn_up", tlm::OpBlock::kDenseFfn},
      {"ffn_down", tlm::OpBlock::kDenseFfn},
      {"router", tlm::OpBlock::kMoe},
      {"experts", tlm::OpBlock::kMoe},
      {"shared_up", tlm::OpBlock::kMoe},
      {"shared_down", tlm::OpBlock::kMoe},
      {"moe_combine", tlm::OpBlock::kMoe},
      {"dispatch", tlm::OpBlock::kMoe},
      {"combine", tlm::OpBlock::kMoe},
      {"lm_head", tlm::OpBlock::kLmHead},
  };
  const auto it = kBlocks.find(opName);
  return it == kBlocks.end() ? tlm::OpBlock::kOther : it->second;
}

uint64_t PlannedOp::bytes() const {
  return bytesOn(hw::KvTier::kLocalHbm);
}

uint64_t PlannedOp::bytesOn(hw::KvTier tier) const {
  return std::accumulate(accesses.begin(), accesses.end(), uint64_t{0},
                         [tier](uint64_t sum, const MemoryAccess& a) { return sum + (a.tier == tier ? a.bytes : 0); });
}

double PlannedOp::flops() const {
  return std::accumulate(gemms.begin(), gemms.end(), 0.0,
                         [](double sum, const tlm::GemmShape& g) { return sum + g.flops(); });
}

uint64_t shardOf(uint64_t total, int parts, int rank) {
  const auto p = static_cast<uint64_t>(parts);
  return total / p + (static_cast<uint64_t>(rank) < total % p ? 1 : 0);
}

uint64_t attendedTokens(uint64_t context, uint64_t tokens, uint64_t window) {
  if (window == 0) return tokens * context + tokens * (tokens + 1) / 2;
  if (context >= window) return tokens * window;
  // Queries j = 1 .. growing see context + j tokens until the window is full.
  const uint64_t growing = std::min(tokens, window - context);
  return growing * context + growing * (growing + 1) / 2 + (tokens - growing) * window;
}

uint64_t StepBatch::tokens() const {
  return std::accumulate(sequences.begin(), sequences.end(), uint64_t{0},
                         [](uint64_t sum, const StepSequence& q) { return sum + q.tokens; });
}

void StepPlan::appendDraft(StepPlan&& pass) {
  ops.reserve(ops.size() + pass.ops.size());
  for (PlannedOp& op : pass.ops) {
    op.name = "draft." + op.name;  // its block stays the one blockOf gave its own name
    ops.push_back(std::move(op));
  }
  draftOps += pass.ops.size();
  collectiveBytes += pass.collectiveBytes;
  bytesMoved += pass.bytesMoved;
  remoteKvBytes += pass.remoteKvBytes;
  hostKvBytes += pass.hostKvBytes;
  flops += pass.flops;
  vectorOps += pass.vectorOps;
  convertOps += pass.convertOps;
  expertTokens += pass.expertTokens;
}

}  // namespace scoville::workload
