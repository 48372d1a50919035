#include "hw/VectorUnitConfig.h"

#include <algorithm>
#include <cmath>

namespace scoville::hw {

using namespace scoville::config;

const Schema<VectorUnitConfig>& VectorUnitConfig::schema() {
  using T = VectorUnitConfig;
  static const Schema<T> s =
      Schema<T>("vector_unit", "SIMD unit for element-wise operations (norms, softmax, activations).")
          .integer("lanes", &T::lanes, required(), between(1, 1 << 20), "element operations per cycle")
          .integer("special_function_lanes", &T::specialFunctionLanes, optional("0"), between(0, 1 << 20),
                   "transcendental functions (the softmax's exp) per cycle on special-function units beside the "
                   "lanes, issued in parallel with them; 0: the lanes evaluate them, one element operation each")
          .quantity("clock", &T::clockHz, dim::kFrequency, required(), positive(), "vector unit clock")
          .integer("pipeline_latency_cycles", &T::pipelineLatencyCycles, required(), between(0, 1e6),
                   "cycles from issue to the first result");
  return s;
}

uint64_t VectorUnitConfig::cycles(double elementOps, double specialOps) const {
  if (!(elementOps > 0)) return 0;
  double issue = elementOps / lanes;
  if (specialFunctionLanes > 0 && specialOps > 0) {
    const double special = std::min(specialOps, elementOps);
    issue = std::max((elementOps - special) / lanes, special / specialFunctionLanes);
  }
  return static_cast<uint64_t>(std::ceil(issue)) + static_cast<uint64_t>(pipelineLatencyCycles);
}

}  // namespace scoville::hw
