#include "tlm/Precision.h"

namespace scoville::tlm {

double bitsPerElement(Precision p) {
  switch (p) {
    case Precision::kFp32: return 32.0;
    case Precision::kBf16: return 16.0;
    case Precision::kFp8: return 8.0;
    case Precision::kFp4: return 4.0 + 8.0 / 32.0;
    case Precision::kInt4: return 4.0 + 16.0 / 32.0;
  }
  return 0.0;
}

const std::vector<std::pair<std::string, Precision>>& precisionNames() {
  static const std::vector<std::pair<std::string, Precision>> kNames{{"fp32", Precision::kFp32},
                                                                     {"bf16", Precision::kBf16},
                                                                     {"fp8", Precision::kFp8},
                                                                     {"fp4", Precision::kFp4},
                                                                     {"int4", Precision::kInt4}};
  return kNames;
}

std::string precisionName(Precision p) {
  for (const auto& [name, value] : precisionNames()) {
    if (value == p) return name;
  }
  return "?";
}

}  // namespace scoville::tlm
