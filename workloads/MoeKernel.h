#pragma once
// The grouped-GEMM kernel a software stack runs the routed experts with, as the step planner lays
// it out: each expert's tokens are the rows of its GEMMs, computed in tiles of `tile rows` rows,
// so an expert's rows are padded to whole tiles. The tile's rows follow the step's routing as the
// kernels choose them, from the mean tokens per expert (all gates of the step over all routed
// experts, whether held here or not), one of two ways:
//   - by default the next power of two of the mean, clamped to [min_tile_rows, max_tile_rows] (a
//     kernel with one tile size has min = max);
//   - with a list of `tile_rows`, the first (smallest) whose rows the mean fills to less than
//     `tile_fill` (mean < tile_fill x rows), or the last (largest) when none does: the rule of a
//     kernel that picks from a fixed set of tile shapes.
// Sources, per kernel:
//   - triton_kernels' matmul_ogs (vLLM and TensorRT-LLM on Hopper for MXFP4 experts):
//     opt_flags block_m = max(16, min(next_power_of_2(tokens_per_expt), 128));
//   - TensorRT-LLM's trtllm-gen MoE kernels on Blackwell (the tokens are the MMA's N side):
//     tile_tokens_dim = min(max(next_power_of_2(tokens_per_expert), 8), 64);
//   - DeepGEMM-style FP8 block-scaled grouped GEMMs on Hopper: every expert's rows aligned to 128;
//   - vLLM's Marlin MoE (fused_marlin_moe, W4A16: what VLLM_MXFP4_USE_MARLIN=1 selects on Hopper):
//     block_size_m the first of 8, 16, 32, 48, 64 with M x topk / E / block_size_m < 0.9, else 64
//     (`tile_rows: [8, 16, 32, 48, 64]`, `tile_fill: 0.9`); its MMAs are Ampere's warp-level
//     mma.sync (`mma: warp`).
// Experts stored narrower than the compute precision (MXFP4 computed in BF16 or FP8 on a chip with
// no FP4 datapath) are converted in the kernel's main loop: every tile of rows converts the weight
// tile it multiplies, `convert_ops` vector element operations per weight element, on the vector
// unit while the tile's weights load (PlannedOp::convertOps; the step driver's load stream issues
// them beside the loads, and the tile is ready when both are done).
// A kernel that needs its GEMMs' dimensions in whole tiles stores the experts padded
// (`hidden_align`, `inner_align`): each expert's hidden width is rounded up to a multiple of
// hidden_align and its inner width (this chip's slice of it) to inner_align, and the padding is
// held, streamed and multiplied like weights (StepPlanner's layout). vLLM's Marlin MoE needs
// n % 256 == 0 and k % 128 == 0 in both of its GEMMs (gate/up: n = 2 x inner, k = hidden; down:
// n = hidden, k = inner), so vLLM pads MXFP4 experts to hidden 256 and inner 128
// (mxfp4_round_up_hidden_size_and_intermediate_size): gpt-oss-120b's 2880 x 2880 expert is
// 3072 x 2944 on one GPU (+9%) and 3072 x 768 per GPU at tp 4 (+14%).
// Absent, the experts' GEMMs are exact: an expert with n tokens is an n-row GEMM.

#include <cstdint>
#include <string>
#include <vector>

#include "config/Schema.h"
#include "tlm/Precision.h"
#include "workloads/AttentionKernel.h"

namespace scoville::workload {

struct MoeKernelConfig {
  std::string name;
  /// Expert weight precisions it serves (tlm precision names); empty: any.
  std::vector<std::string> expertPrecisions;
  int64_t minTileRows = 128;
  int64_t maxTileRows = 128;
  /// The tile shapes' rows, ascending, when the kernel picks from a fixed set (empty: powers of two
  /// in [minTileRows, maxTileRows]); it takes the first the mean fills to less than tileFill.
  std::vector<int> tileRowChoices;
  double tileFill = 1.0;
  /// Vector element operations per weight element converted, per tile of rows (mixed input only).
  double convertOps = 0.0;
  /// Its achieved share of the modelled compute time, in place of the stack's moe_efficiency; 0:
  /// the stack's.
  double efficiency = 0.0;
  /// How it issues its MMAs: warp-level mma.sync runs at the chip's tensor_core.warp_mma_rate.
  MmaKind mma = MmaKind::kWarpgroup;
  /// The experts' stored widths are padded to multiples of these (1: as the model has them).
  int64_t hiddenAlign = 1;
  int64_t innerAlign = 1;

  /// Whether it runs experts stored at precision `p`.
  bool serves(tlm::Precision p) const;
  /// Rows per tile for a step routing `gates` token-expert pairs over `experts` routed experts.
  uint64_t tileRows(uint64_t gates, uint64_t experts) const;
  /// Whether it stores the experts padded (hidden_align or inner_align above 1).
  bool pads() const { return hiddenAlign > 1 || innerAlign > 1; }

  static const config::Schema<MoeKernelConfig>& schema();
};

bool operator==(const MoeKernelConfig& a, const MoeKernelConfig& b);

}  // namespace scoville::workload
