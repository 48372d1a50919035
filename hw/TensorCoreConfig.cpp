#include "hw/TensorCoreConfig.h"

#include <algorithm>
#include <cmath>

#include "hw/rtl/MacArrayModel.h"

namespace scoville::hw {

using namespace scoville::config;

double MacRates::of(tlm::Precision p) const {
  switch (p) {
    case tlm::Precision::kFp32: return fp32;
    case tlm::Precision::kBf16: return bf16;
    case tlm::Precision::kFp8: return fp8;
    case tlm::Precision::kFp4: return fp4;
    case tlm::Precision::kInt4: return fp4;  // 4-bit integer MACs run on the 4-bit datapath
  }
  return 0.0;
}

const Schema<MacRates>& MacRates::schema() {
  static const Schema<MacRates> s =
      Schema<MacRates>("mac_rates", "MACs per array cell per cycle for each compute precision; 0 = unsupported.")
          .number("fp32", &MacRates::fp32, optional("0"), nonNegative(), "FP32 MACs per cell per cycle")
          .number("bf16", &MacRates::bf16, optional("0"), nonNegative(), "BF16 MACs per cell per cycle")
          .number("fp8", &MacRates::fp8, optional("0"), nonNegative(), "FP8 MACs per cell per cycle")
          .number("fp4", &MacRates::fp4, optional("0"), nonNegative(),
                  "4-bit (MXFP4/NVFP4 and INT4) MACs per cell per cycle")
          .rule("bf16", "at least one precision must have a rate > 0",
                [](const MacRates& r) { return r.fp32 > 0 || r.bf16 > 0 || r.fp8 > 0 || r.fp4 > 0; });
  return s;
}

namespace {

/// Whether a MAC rate can run on the RTL array: 0 (unsupported) or a whole number of its lanes.
bool rtlRate(double rate) {
  return rate == 0.0 || (rate >= 1.0 && rate <= rtl::kMacArrayLanes && std::floor(rate) == rate);
}

}  // namespace

const Schema<RtlCosimConfig>& RtlCosimConfig::schema() {
  static const Schema<RtlCosimConfig> s =
      Schema<RtlCosimConfig>("rtl_cosim",
                             "RTL co-simulation of the tensor core's arrays (docs/cosim.md); read when impl is rtl "
                             "or lockstep.")
          .text("model", &RtlCosimConfig::model, optional("mac_array"),
                "Verilated RTL block standing in for each array (hw/rtl/MacArrayModel.h registers them)")
          .number("cycle_tolerance", &RtlCosimConfig::cycleTolerance, optional("0.25"), between(0, 100),
                  "lockstep: largest relative difference |RTL - TLM| / TLM in cycles of any one GEMM; a run with "
                  "a GEMM beyond it fails")
          .integer("seed", &RtlCosimConfig::seed, optional("1"), nonNegative(),
                   "seed of the int8 operands generated for GEMMs that carry none (every platform run's)")
          .rule("model", "rtl.model must name an RTL block this build has (mac_array)",
                [](const RtlCosimConfig& c) { return rtl::hasMacArrayModel(c.model); });
  return s;
}

double TensorCoreConfig::peakFlops(tlm::Precision p) const {
  return 2.0 * count * arrayRows * arrayCols * macsPerCell.of(p) * clockHz;
}

const Schema<TensorCoreConfig>& TensorCoreConfig::schema() {
  static const Schema<TensorCoreConfig> s =
      Schema<TensorCoreConfig>("tensor_core",
                               "Weight-stationary systolic matrix engines: weights of a K x N tile are held in an "
                               "array while M activation rows stream through; `count` arrays share each GEMM.")
          .integer("count", &TensorCoreConfig::count, required(), between(1, 4096),
                   "identical arrays; a GEMM's weight tiles are spread over them round-robin")
          .quantity("clock", &TensorCoreConfig::clockHz, dim::kFrequency, required(), positive(), "array clock")
          .integer("array_rows", &TensorCoreConfig::arrayRows, required(), between(1, 65536),
                   "array height: K (reduction) elements per tile")
          .integer("array_cols", &TensorCoreConfig::arrayCols, required(), between(1, 65536),
                   "array width: N (output) elements per tile at 1 MAC/cell/cycle")
          .child("macs_per_cell_per_cycle", &TensorCoreConfig::macsPerCell, MacRates::schema(), required(),
                 "MAC rate per cell by precision; multiplies the effective array width")
          .integer("pipeline_latency_cycles", &TensorCoreConfig::pipelineLatencyCycles, required(), between(0, 1e6),
                   "cycles from issue to first result beyond the array's own fill and drain")
          .integer("operand_buffers", &TensorCoreConfig::operandBuffers, optional("2"), between(1, 64),
                   "weight-tile staging buffers (2 = double buffering: the next operands load during compute)")
          .integer("units", &TensorCoreConfig::units, optional("0"), between(0, 4096),
                   "compute units the arrays are grouped into (a GPU's SMs; count must divide evenly): a fused "
                   "kernel's thread blocks are scheduled onto them (waves, unequal blocks); 0: every array is one")
          .number("warp_mma_rate", &TensorCoreConfig::warpMmaRate, optional("1"), between(0.01, 1),
                  "share of the array rate reached by GEMMs a kernel issues as warp-level MMA instructions "
                  "(Hopper's mma.sync against wgmma; an attention or MoE kernel's `mma: warp`); 1: no difference")
          .rule("units",
                "tensor_core.units must divide tensor_core.count (the arrays are spread evenly over the units)",
                [](const TensorCoreConfig& c) { return c.units == 0 || c.count % c.units == 0; })
          .choice(
              "impl", &TensorCoreConfig::impl,
              {{"tlm", TensorCoreImpl::kTlm}, {"rtl", TensorCoreImpl::kRtl}, {"lockstep", TensorCoreImpl::kLockstep}},
              optional("tlm"),
              "what serves GEMMs: tlm (the cycle formula above), rtl (Verilated RTL arrays clocked per cycle: "
              "slow, real values) or lockstep (RTL, checked against the TLM model value for value and cycle "
              "count within rtl.cycle_tolerance)")
          .child("rtl", &TensorCoreConfig::rtl, RtlCosimConfig::schema(), optional("{}"),
                 "RTL co-simulation settings (impl rtl or lockstep)")
          .rule("array_rows",
                fmt::format("impl rtl and lockstep need array_rows = {}, the rows the RTL was Verilated with "
                            "(configure with -DSCOVILLE_RTL_ROWS=N for another)",
                            rtl::kMacArrayRows),
                [](const TensorCoreConfig& c) {
                  return c.impl == TensorCoreImpl::kTlm || c.arrayRows == rtl::kMacArrayRows;
                })
          .rule("array_cols",
                fmt::format("impl rtl and lockstep need array_cols = {}, the columns the RTL was Verilated with "
                            "(configure with -DSCOVILLE_RTL_COLS=N for another)",
                            rtl::kMacArrayCols),
                [](const TensorCoreConfig& c) {
                  return c.impl == TensorCoreImpl::kTlm || c.arrayCols == rtl::kMacArrayCols;
                })
          .rule("macs_per_cell_per_cycle",
                fmt::format(
                    "impl rtl and lockstep need each macs_per_cell_per_cycle rate to be 0 or a whole number from 1 "
                    "to {}, the lanes per cell the RTL was Verilated with",
                    rtl::kMacArrayLanes),
                [](const TensorCoreConfig& c) {
                  const MacRates& r = c.macsPerCell;
                  return c.impl == TensorCoreImpl::kTlm ||
                         (rtlRate(r.fp32) && rtlRate(r.bf16) && rtlRate(r.fp8) && rtlRate(r.fp4));
                })
          .rule("operand_buffers", "impl rtl and lockstep need operand_buffers = 2, the RTL's two weight banks",
                [](const TensorCoreConfig& c) { return c.impl == TensorCoreImpl::kTlm || c.operandBuffers == 2; });
  return s;
}

uint64_t TensorCoreConfig::gemmCycles(const tlm::GemmShape& shape, tlm::Precision p, bool warpMma) const {
  const auto ceilDiv = [](uint64_t a, uint64_t b) { return (a + b - 1) / b; };
  const double rate = macsPerCell.of(p);
  if (rate <= 0.0 || shape.m == 0 || shape.n == 0 || shape.k == 0 || shape.count == 0) return 0;
  const auto rows = static_cast<uint64_t>(arrayRows);
  const auto cols = static_cast<uint64_t>(arrayCols);
  // A rate below 1 (e.g. FP32 at quarter rate) stretches each tile; above 1 widens the array.
  const auto effectiveCols = static_cast<uint64_t>(std::max(1.0, std::floor(static_cast<double>(cols) * rate)));
  const double slowdown = (rate < 1.0 ? 1.0 / rate : 1.0) / (warpMma ? warpMmaRate : 1.0);
  const uint64_t tiles = ceilDiv(shape.k, rows) * ceilDiv(shape.n, effectiveCols);
  const uint64_t perTile = operandBuffers >= 2 ? std::max(shape.m, rows) : shape.m + rows;
  const uint64_t rounds = ceilDiv(shape.count * tiles, static_cast<uint64_t>(count));
  const double streaming = static_cast<double>(rounds * perTile) * slowdown;
  return static_cast<uint64_t>(std::ceil(streaming)) + rows + cols + static_cast<uint64_t>(pipelineLatencyCycles);
}

}  // namespace scoville::hw
