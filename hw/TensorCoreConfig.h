#pragma once

#include <cstdint>
#include <string>

#include "config/Schema.h"
#include "tlm/OpTypes.h"
#include "tlm/Precision.h"

namespace scoville::hw {

/// Multiply-accumulates each array cell completes per cycle, per compute precision (0: the
/// format is not supported by the array).
struct MacRates {
  double fp32 = 0.0;
  double bf16 = 0.0;
  double fp8 = 0.0;
  double fp4 = 0.0;

  double of(tlm::Precision p) const;
  static const config::Schema<MacRates>& schema();
};

/// What serves the tensor core's transactions.
enum class TensorCoreImpl {
  kTlm,       ///< the TLM model (TensorCore.h): the formula, no clock
  kRtl,       ///< the Verilated RTL MAC arrays behind a transactor (RtlTensorCore.h)
  kLockstep,  ///< both: the RTL times the platform, the TLM model checks every result and cycle count
};

/// The RTL co-simulation of a tensor core (docs/cosim.md).
struct RtlCosimConfig {
  std::string model;            ///< registered RTL block (hw/rtl/MacArrayModel.h)
  double cycleTolerance = 0.0;  ///< lock-step: largest |RTL - TLM| / TLM cycles of one GEMM
  uint64_t seed = 0;            ///< operand stream of payloads that carry none

  static const config::Schema<RtlCosimConfig>& schema();
};

/// A weight-stationary systolic matrix engine (see TensorCore.h for the timing model).
struct TensorCoreConfig {
  int count = 0;  ///< identical arrays that share the tiles of each GEMM
  double clockHz = 0.0;
  int arrayRows = 0;  ///< reduction (K) dimension of the array
  int arrayCols = 0;  ///< output (N) dimension of the array
  MacRates macsPerCell;
  int pipelineLatencyCycles = 0;
  int operandBuffers = 0;  ///< weight-tile staging buffers; 2 = double buffering
  /// Compute units (a GPU's SMs) the arrays are grouped into, count / units each: a fused kernel's
  /// thread blocks (tlm::WorkGrid) are scheduled onto them. 0: every array is a unit.
  int units = 0;
  /// The share of the array rate a GEMM issued as warp-level MMA instructions reaches (Hopper's
  /// mma.sync against its warpgroup wgmma); 1: the full rate whatever the instruction.
  double warpMmaRate = 1.0;
  TensorCoreImpl impl = TensorCoreImpl::kTlm;
  RtlCosimConfig rtl;

  /// Peak dense FLOP/s at precision p over all arrays (2 FLOPs per MAC).
  double peakFlops(tlm::Precision p) const;
  /// Cycles for one GEMM under the tensor core's timing model (hw/TensorCore.h); 0 when precision
  /// p is unsupported. The module and the phase policies' predictor both use it.
  /// `warpMma`: issued as warp-level MMA, at warpMmaRate of the array rate.
  uint64_t gemmCycles(const tlm::GemmShape& shape, tlm::Precision p, bool warpMma = false) const;
  /// Compute units (units, or count when 0).
  int computeUnits() const { return units > 0 ? units : count; }
  static const config::Schema<TensorCoreConfig>& schema();
};

}  // namespace scoville::hw
