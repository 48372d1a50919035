#pragma once
// Numeric formats of weights, activations and KV cache, with their storage cost.

#include <string>
#include <utility>
#include <vector>

namespace scoville::tlm {

enum class Precision { kFp32, kBf16, kFp8, kFp4, kInt4 };

/// Bits per element, including block-scale overhead where the format has one: MXFP4 stores one
/// 8-bit scale per 32 four-bit elements (4.25 bits/element); INT4 (W4A16, group 32) one 16-bit
/// scale per 32 elements (4.5 bits/element). FP8 is counted without scales here
/// (per-tensor); block-scaled FP8 variants are described by the model, not by this enum.
double bitsPerElement(Precision p);

/// YAML names of the formats, for schema choices: fp32, bf16, fp8, fp4, int4.
const std::vector<std::pair<std::string, Precision>>& precisionNames();
std::string precisionName(Precision p);

}  // namespace scoville::tlm
