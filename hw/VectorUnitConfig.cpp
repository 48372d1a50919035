#include "hw/VectorUnitConfig.h"

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

}  // namespace scoville::hw
