#pragma once
// Kernel microbenchmarks: single kernels (an HBM stream, a GEMM, an attention kernel) timed on
// real hardware, and board power under sustained loads of them, kept as a calibration dataset
// (workloads/validation/*-kernels.yaml, written by scripts/gpu-microbench-import from the
// measurements of scripts/gpu-microbench.py), and the plans that run the same kernels on a
// simulated chip. `scoville kernels` (cli/KernelsCommand.cpp) runs them all on one chip of a
// platform, in one elaboration, and compares time and power. Format: docs/validation.md.
//
// Each kernel is planned with the code serving runs use, so the comparison speaks for them:
// weight GEMMs with appendWeightGemm (the planner's tiling), attention with the StepPlanner on a
// one-layer model of the kernel's heads (its attention ops only), HBM streams as tiles of one
// staging buffer each.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/Schema.h"
#include "hw/chip/ChipConfig.h"
#include "tlm/Precision.h"
#include "workloads/StepPlan.h"
#include "workloads/Validation.h"

namespace scoville::workload {

enum class KernelKind { kHbmRead, kHbmWrite, kHbmCopy, kGemm, kAttentionDecode, kAttentionPrefill, kMoe };

/// Stable name of a kind in datasets and results: hbm_read, hbm_write, hbm_copy, gemm,
/// attention_decode, attention_prefill, moe.
const char* kernelKindName(KernelKind kind);
/// The streams (hbm_read, hbm_write, hbm_copy), and the attention kernels (decode, prefill).
bool isHbmKind(KernelKind kind);
bool isAttentionKind(KernelKind kind);

/// One kernel as measured: its shape and its time per launch.
struct MeasuredKernel {
  std::string id;  ///< unique in the dataset
  KernelKind kind = KernelKind::kGemm;
  tlm::Precision precision = tlm::Precision::kBf16;  ///< gemm: operand precision; attention: Q, K, V
  double bytes = 0.0;                                ///< hbm: bytes moved (copy: read plus written)
  int64_t m = 0, k = 0, n = 0;                       ///< gemm: C[M x N] = A[M x K] x W[K x N]
  /// moe: a fused mixture-of-experts layer: `m` tokens, each routed to `topK` of `experts` experts
  /// of hidden width `k` and inner width `n` (gate and up [k x 2n], down [n x k]); `precision` is the
  /// experts' weights (with `scaleBlock` elements per scale of `scaleBits`), computed in
  /// `computePrecision`; each token goes to topK distinct experts uniformly at random.
  int64_t experts = 0, topK = 0;
  int64_t scaleBlock = 0, scaleBits = 0;
  tlm::Precision computePrecision = tlm::Precision::kBf16;
  int64_t batch = 1;                            ///< attention: sequences
  int64_t context = 0;                          ///< attention: KV tokens per sequence (prefill: its prompt)
  int64_t heads = 0, kvHeads = 0, headDim = 0;  ///< attention: query heads, KV heads, elements per head
  double seconds = 0.0;                         ///< measured time per launch (median)
  double secondsMin = 0.0, secondsMax = 0.0;    ///< spread of the repetitions (0: not given)
  bool constantData = false;                    ///< the data written is a constant (a fill): its wires do not toggle
  int64_t queryBlock = 1;  ///< attention: query rows computed per block (fewer real rows are padded)
  std::string exclude;     ///< non-empty: why the point is not compared (listed, never dropped)
  std::string note;

  /// attention: its KV heads (kv_heads, or as many as its query heads when 0).
  int64_t kvHeadCount() const { return kvHeads > 0 ? kvHeads : heads; }

  static const config::Schema<MeasuredKernel>& schema();
};

/// Board power under a sustained load of one kernel of the dataset (or idle).
struct MeasuredPower {
  std::string id;
  std::string kernel;  ///< id of the kernel launched back to back; empty: idle
  double duty = 1.0;   ///< share of the time the kernel ran (bursts with the device idle between)
  double watts = 0.0;
  double smClockHz = 0.0;    ///< the core clock the board ran at (0: not given)
  double launchTimeS = 0.0;  ///< time per launch while the load ran (0: the kernel's timed `time`)
  std::string note;

  static const config::Schema<MeasuredPower>& schema();
};

/// A constant of a chip type's `power` section fitted by `scoville calibrate-power`, within a
/// public range.
struct PowerFitParameter {
  std::string key;      ///< its key in the chip type's `power` section (power/EnergyKeys.h)
  std::string minText;  ///< lower end of the range, a quantity in the key's unit (checked on load)
  std::string maxText;  ///< upper end
  std::string source;   ///< where the range comes from

  static const config::Schema<PowerFitParameter>& schema();
};

/// A constant set to a fixed multiple of a fitted one.
struct PowerFitTie {
  std::string key;
  std::string to;
  double ratio = 1.0;
  std::string source;

  static const config::Schema<PowerFitTie>& schema();
};

/// How the dataset's power points calibrate a chip type's energy model: which points train the
/// fit (the rest are predicted), which constants it fits and within which ranges.
struct PowerFitSpec {
  std::vector<std::string> training;
  std::vector<PowerFitParameter> parameters;
  std::vector<PowerFitTie> tied;
  /// Weight of the pull of each constant towards the middle of its range, relative to a point's
  /// relative error (small: the data decides what it can, the ranges the rest).
  double prior = 0.01;

  static const config::Schema<PowerFitSpec>& schema();
};

/// Which kernels train the timing model's fitted constant, the chip's command_processor.kernel_launch
/// (the launch gap between kernels); the rest are predicted.
struct TimingFitSpec {
  std::vector<std::string> training;

  static const config::Schema<TimingFitSpec>& schema();
};

/// The kernel_launch that fits the training kernels best (least squares of the relative error):
/// each training kernel is one launch at the nominal clock, so its time moves one for one with the
/// gap before it, and the fit is closed-form. `gapS` is the whole gap the simulated times include
/// (0 when the chip launched nothing), `hopsS` the part of a gap that is not kernel_launch (the
/// launch's on-chip hops); `measuredS` and `simulatedS` are the training kernels'. Clamped at 0.
double fitKernelLaunchS(const std::vector<double>& measuredS, const std::vector<double>& simulatedS, double gapS,
                        double hopsS);

struct KernelDataset {
  std::string name;
  std::string description;
  std::string hardware;     ///< the measured device, as the driver names it
  std::string platform;     ///< the platform whose first chip stands for it (name or file)
  std::string date;         ///< when it was measured (ISO 8601)
  std::string source;       ///< what produced the numbers
  std::string method;       ///< how they were taken (timing, inputs, counting)
  std::string environment;  ///< driver, CUDA, framework versions
  /// The core clock the platform chip's nominal operating point stands for: a power point's
  /// `sm_clock` is taken relative to it (0: every point at the nominal point).
  double nominalSmClockHz = 0.0;
  /// The times are of launches back to back for long enough that the board's power limiter held
  /// its rating (`timing_load: sustained`): the simulator times each kernel under the chip's
  /// rated-power limiter in its steady state (power/PowerLimit.h).
  bool sustainedTiming = false;
  std::vector<MeasuredKernel> kernels;
  std::vector<MeasuredPower> power;
  std::optional<PowerFitSpec> powerFit;
  std::optional<TimingFitSpec> timingFit;
  /// The attention kernel the attention kernels were timed with (its tiles, MMA, flash-decoding);
  /// absent: attention is planned as exact GEMMs (padded to each kernel's query_block).
  std::optional<AttentionKernelConfig> attentionKernel;

  static const config::Schema<KernelDataset>& schema();
};

/// Loads and checks a kernel dataset (ConfigError naming the file and key): unique ids, each
/// kind's shape keys, power loads naming kernels of the dataset.
KernelDataset loadKernelDataset(const std::string& file);

// The plans that run the kernels (KernelPlan.cpp).

/// The kernel's work on `chip` as a one-step plan (its totals filled: bytesMoved, flops,
/// vectorOps). Throws ConfigError kInvalidConfig when the chip cannot run it (precision).
/// Attention kernels are laid out as `attention` does (KernelDataset::attentionKernel), when given;
/// a moe kernel's experts as `moeKernel` runs them (the software stack's kernel for their precision,
/// MoeKernel.h; null: exact GEMMs), its tokens routed uniformly at random (a fixed seed).
StepPlan planKernel(const MeasuredKernel& kernel, const hw::ChipConfig& chip,
                    const std::optional<AttentionKernelConfig>& attention = std::nullopt,
                    const MoeKernelConfig* moeKernel = nullptr);

/// The class a kernel is summarised under: "hbm", "attention_decode", "attention_prefill", and
/// GEMMs by precision and by the bound of their roofline on `chip` (`plan` is the kernel's):
/// "gemm_bf16_memory" (decode-shaped: the weights' bytes bind), "gemm_bf16_compute", and fp8 alike;
/// mixtures of experts alike by their weights' precision: "moe_int4_memory", "moe_int4_compute".
std::string kernelClass(const MeasuredKernel& kernel, const StepPlan& plan, const hw::ChipConfig& chip);

/// One kernel's comparison.
struct KernelComparison {
  std::string id;
  std::string cls;
  double measuredS = 0.0;
  double simulatedS = 0.0;
  double rooflineS = 0.0;
  double errorPercent = 0.0;  ///< (simulated - measured) / measured x 100
};

/// Per class: the error statistics, and the least-squares line measured = overhead + simulated /
/// efficiency through its points (what a software stack adds to the hardware's time: a fixed cost
/// per launch and a fraction of the modelled rate).
struct KernelClassSummary {
  MetricSummary error;  ///< points, MAPE, the largest error and its kernel (as `validate` summarises)
  double fitOverheadS = 0.0;
  double fitEfficiency = 0.0;  ///< 0: fewer than two points or no spread
};

std::map<std::string, KernelClassSummary> summarizeKernels(const std::vector<KernelComparison>& comparisons);

}  // namespace scoville::workload
