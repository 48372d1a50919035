#include "hw/VectorUnitConfig.h"

#include <cmath>

namespace scoville::hw {

using namespace scoville::config;

const Schema<VectorUnitConfig>& VectorUnitConfig::schema() {
  using T = VectorUnitConfig;
  static const Schema<T> s =
      Schema<T>("vector_unit", "SIMD unit for element-wise operations (norms, softmax, activations).")
          .integer("lanes", &T::lanes, required(), between(1, 1 << 20), "element operations per cycle")
          .quantity("clock", &T::clockHz, dim::kFrequency, required(), positive(), "vector unit clock")
          .integer("pipeline_latency_cycles", &T::pipelineLatencyCycles, required(), between(0, 1e6),
                   "cycles from issue to the first result");
  return s;
}

uint64_t VectorUnitConfig::cycles(double elementOps) const {
  if (!(elementOps > 0)) return 0;
  return static_cast<uint64_t>(std::ceil(elementOps / lanes)) + static_cast<uint64_t>(pipelineLatencyCycles);
}

}  // namespace scoville::hw
