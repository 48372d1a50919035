#include "hw/TensorCoreConfig.h"

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
                   "weight-tile staging buffers (2 = double buffering: the next operands load during compute)");
  return s;
}

}  // namespace scoville::hw
