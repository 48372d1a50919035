#include "workloads/MoeKernel.h"

#include <algorithm>

namespace scoville::workload {

using namespace scoville::config;

bool MoeKernelConfig::serves(tlm::Precision p) const {
  if (expertPrecisions.empty()) return true;
  const std::string name = tlm::precisionName(p);
  return std::find(expertPrecisions.begin(), expertPrecisions.end(), name) != expertPrecisions.end();
}

uint64_t MoeKernelConfig::tileRows(uint64_t gates, uint64_t experts) const {
  if (!tileRowChoices.empty()) {
    const double mean = static_cast<double>(gates) / static_cast<double>(std::max<uint64_t>(1, experts));
    for (const int rows : tileRowChoices) {
      if (mean < tileFill * rows) return static_cast<uint64_t>(rows);
    }
    return static_cast<uint64_t>(tileRowChoices.back());
  }
  const uint64_t mean = std::max<uint64_t>(1, experts == 0 ? gates : gates / experts);
  uint64_t pow2 = 1;
  while (pow2 < mean) pow2 <<= 1;
  return std::clamp<uint64_t>(pow2, static_cast<uint64_t>(minTileRows), static_cast<uint64_t>(maxTileRows));
}

const Schema<MoeKernelConfig>& MoeKernelConfig::schema() {
  using T = MoeKernelConfig;
  static const Schema<T> s =
      Schema<T>("moe_kernel",
                "A grouped-GEMM kernel of the routed experts (workloads/MoeKernel.h): each expert's tokens are "
                "padded to whole tiles of rows, the tile being the next power of two of the step's mean tokens per "
                "expert within [min_tile_rows, max_tile_rows], or picked from tile_rows.")
          .text("name", &T::name, required(), "the kernel it stands for, with its source")
          .textList("expert_precisions", &T::expertPrecisions, optional("[]"),
                    "expert weight precisions it runs (fp32, bf16, fp8, fp4, int4); the stack's first kernel that "
                    "serves a model's experts runs them; empty: any")
          .integer("min_tile_rows", &T::minTileRows, optional("128"), between(1, 4096),
                   "fewest token rows per tile (an expert with fewer tokens still computes this many)")
          .integer("max_tile_rows", &T::maxTileRows, optional("128"), between(1, 4096), "most token rows per tile")
          .integerList("tile_rows", &T::tileRowChoices, optional("[]"), between(1, 4096), true,
                       "the rows of the kernel's tile shapes, ascending, when it picks from a fixed set: the first "
                       "that the step's mean tokens per expert fills to less than tile_fill, else the last; in place "
                       "of the powers of two in [min_tile_rows, max_tile_rows]")
          .number("tile_fill", &T::tileFill, optional("1"), between(0.01, 1),
                  "with tile_rows: how full the mean tokens per expert must leave a tile for the kernel to take it "
                  "(vLLM's Marlin: 0.9)")
          .number("convert_ops", &T::convertOps, optional("0"), between(0, 1000),
                  "vector element operations per weight element converted to the compute precision, by every "
                  "tile of rows that multiplies it (experts stored narrower than the compute: MXFP4 on Hopper); "
                  "0: conversion costs nothing")
          .number("efficiency", &T::efficiency, optional("0"), between(0, 1),
                  "the kernel's achieved share of the modelled compute time, in place of the stack's moe_efficiency "
                  "for the experts it runs (what its modelled mechanisms leave unexplained); 0: moe_efficiency")
          .choice("mma", &T::mma, mmaKindNames(), optional("warpgroup"),
                  "how it issues its MMAs: warpgroup (the array rate: Hopper's wgmma, Blackwell's tcgen05) or warp "
                  "(Ampere-style mma.sync, at the chip's tensor_core.warp_mma_rate)")
          .integer("hidden_align", &T::hiddenAlign, optional("1"), between(1, 4096),
                   "the experts are stored with their hidden width padded to a multiple of this, the padding held, "
                   "streamed and multiplied like weights (a kernel that needs whole tiles: vLLM's Marlin MoE, 256)")
          .integer("inner_align", &T::innerAlign, optional("1"), between(1, 4096),
                   "the same for each expert's inner width, this chip's tensor-parallel slice of it (vLLM's Marlin "
                   "MoE, 128)")
          .rule("max_tile_rows", "max_tile_rows must be at least min_tile_rows",
                [](const T& k) { return k.maxTileRows >= k.minTileRows; })
          .rule("tile_rows", "tile_rows must be strictly ascending",
                [](const T& k) {
                  return std::adjacent_find(k.tileRowChoices.begin(), k.tileRowChoices.end(),
                                            [](int a, int b) { return b <= a; }) == k.tileRowChoices.end();
                })
          .check("tile_rows replaces min_tile_rows, max_tile_rows; tile_fill needs tile_rows",
                 [](const T& k, const Node& n) {
                   if (!k.tileRowChoices.empty()) {
                     n.rejectIfGiven("min_tile_rows", "is not read with tile_rows (the list gives every tile)");
                     n.rejectIfGiven("max_tile_rows", "is not read with tile_rows (the list gives every tile)");
                   } else {
                     n.rejectIfGiven("tile_fill", "is read with tile_rows only");
                   }
                 })
          .rule("expert_precisions", "expert_precisions must name precisions: fp32, bf16, fp8, fp4 or int4",
                [](const T& k) {
                  return std::all_of(k.expertPrecisions.begin(), k.expertPrecisions.end(), [](const std::string& n) {
                    const auto& names = tlm::precisionNames();
                    return std::any_of(names.begin(), names.end(), [&](const auto& e) { return e.first == n; });
                  });
                });
  return s;
}

bool operator==(const MoeKernelConfig& a, const MoeKernelConfig& b) {
  return a.name == b.name && a.expertPrecisions == b.expertPrecisions && a.minTileRows == b.minTileRows &&
         a.maxTileRows == b.maxTileRows && a.tileRowChoices == b.tileRowChoices && a.tileFill == b.tileFill &&
         a.convertOps == b.convertOps && a.efficiency == b.efficiency && a.mma == b.mma &&
         a.hiddenAlign == b.hiddenAlign && a.innerAlign == b.innerAlign;
}

}  // namespace scoville::workload
