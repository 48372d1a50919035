#pragma once
// The properties the fuzz targets check on what a reader accepted (FuzzTargets.h runs them): every
// quantity of an accepted configuration finite and not negative, each configuration's derived
// values sane, and a pure-C++ estimate (the roofline bound of a planned decode step or kernel) of
// an accepted platform, model, scenario or kernel finite and not negative. A broken property, or an
// exception a reader does not document, is thrown as FuzzFailure: the libFuzzer target aborts on it
// (so libFuzzer keeps the input), the unit test FuzzRegressions reports it.

#include <cxxabi.h>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include <fmt/format.h>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "config/Schema.h"
#include "config/Units.h"
#include "hw/chip/ChipConfig.h"
#include "hw/kv/KvCacheConfig.h"
#include "hw/network/NetworkConfig.h"
#include "platforms/PlatformConfig.h"
#include "runtime/PlatformDecode.h"
#include "workloads/KernelBench.h"
#include "workloads/LoadGenerator.h"
#include "workloads/ModelConfig.h"
#include "workloads/Roofline.h"
#include "workloads/Routing.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/SoftwareStack.h"
#include "workloads/StepPlan.h"
#include "workloads/Validation.h"

namespace scoville::test::fuzz {

/// A bug: an exception a reader does not document, or a broken property. Deliberately not a
/// std::exception, so that no `catch (const std::exception&)` on its way swallows it.
struct FuzzFailure {
  std::string message;
};

[[noreturn]] inline void fail(std::string message) {
  throw FuzzFailure{std::move(message)};
}

/// The dynamic type of an exception, demangled ("std::out_of_range").
inline std::string typeName(const std::exception& e) {
  int status = 0;
  const char* mangled = typeid(e).name();
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

/// Fails for an exception `what` may not throw.
[[noreturn]] inline void unexpected(const std::string& what, const std::exception& e) {
  fail(fmt::format("{} threw an undocumented exception {}: {}", what, typeName(e), e.what()));
}

inline void expect(bool holds, const std::string& property) {
  if (!holds) fail("property broken: " + property);
}

/// A size, time or rate: finite and not negative.
inline void expectMagnitude(double value, const std::string& what) {
  expect(std::isfinite(value) && value >= 0.0, fmt::format("{} = {} is not a finite value >= 0", what, value));
}

inline void expectPositive(double value, const std::string& what) {
  expect(std::isfinite(value) && value > 0.0, fmt::format("{} = {} is not a finite value > 0", what, value));
}

// ---------------------------------------------------------------------------------------------
// Every quantity of an accepted tree, whatever its schema: the keys a schema documents as
// quantities (or lists of them) are read again with the unit parser, and must be finite and not
// negative (every physical quantity the configuration holds is a size, time, rate, energy, power,
// voltage or length); plain numbers must be finite.

/// The dimension a documented field type names ("bandwidth (e.g. '4.8 TB/s')", "list of time
/// (e.g. '[250 ns]')"), and whether it is a list; nothing for other types.
inline std::optional<config::Dimension> quantityDimension(const std::string& type, bool& list) {
  namespace dim = config::dim;
  static const config::Dimension kDimensions[] = {dim::kTime,
                                                  dim::kFrequency,
                                                  dim::kBytes,
                                                  dim::kBandwidth,
                                                  dim::kEnergy,
                                                  dim::kPower,
                                                  dim::kEnergyPerByte,
                                                  dim::kEnergyPerFlop,
                                                  dim::kFlops,
                                                  dim::kFlopRate,
                                                  dim::kVoltage,
                                                  dim::kLength,
                                                  dim::kEnergyPerByteLength};
  for (const config::Dimension& d : kDimensions) {
    const std::string name = config::dimensionName(d) + " (e.g.";
    if (type.rfind(name, 0) == 0) {
      list = false;
      return d;
    }
    if (type.rfind("list of " + name, 0) == 0) {
      list = true;
      return d;
    }
  }
  return std::nullopt;
}

inline void checkQuantityText(const config::Node& node, config::Dimension dimension) {
  const std::string& text = node.yaml().Scalar();
  double value = 0.0;
  try {
    value = config::parseQuantityAs(text, dimension);
  } catch (const config::UnitError& e) {
    fail(fmt::format("'{}' = '{}' was accepted, but the unit parser refuses it: {}", node.path(), text, e.what()));
  }
  expectMagnitude(value, fmt::format("quantity '{}' ('{}')", node.path(), text));
}

/// Walks the accepted tree `node` along `schema` (includes resolved as the schema resolves them).
inline void checkQuantities(const config::Node& node, const config::SchemaBase& schema, int depth = 0) {
  if (depth > 32) return;
  std::optional<config::Node> included;
  try {
    included = config::resolveInclude(node);
  } catch (const config::ConfigError& e) {
    fail(fmt::format("an include of an accepted tree does not load again: {}", e.what()));
  }
  if (included) {
    checkQuantities(*included, schema, depth + 1);
    return;
  }
  if (!node.yaml().IsMap()) return;
  for (const config::FieldDoc& field : schema.fields()) {
    const YAML::Node value = node.yaml()[field.key];
    if (!value || value.IsNull()) continue;
    const config::Node child = node.child(value, field.key);
    bool list = false;
    if (const std::optional<config::Dimension> d = quantityDimension(field.type, list)) {
      if (!list) {
        checkQuantityText(child, *d);
      } else if (value.IsSequence()) {
        for (std::size_t i = 0; i < value.size(); ++i) {
          checkQuantityText(config::Node(value[i], child.source(), fmt::format("{}[{}]", child.path(), i)), *d);
        }
      }
      continue;
    }
    if (field.type == "number" && value.IsScalar()) {
      const double number = std::strtod(value.Scalar().c_str(), nullptr);
      expect(std::isfinite(number), fmt::format("number '{}' = '{}' is not finite", child.path(), value.Scalar()));
      continue;
    }
    const bool isMap = field.type.rfind("map: [", 0) == 0;
    const bool isList = field.type.rfind("list of map: [", 0) == 0;
    if (!isMap && !isList) continue;
    const std::size_t open = field.type.find('[');
    const std::string title = field.type.substr(open + 1, field.type.find(']') - open - 1);
    const config::SchemaBase* childSchema = nullptr;
    for (const config::SchemaBase* c : schema.children()) {
      if (c->title() == title) childSchema = c;
    }
    if (childSchema == nullptr) continue;
    if (isMap) {
      checkQuantities(child, *childSchema, depth + 1);
    } else if (value.IsSequence()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        checkQuantities(config::Node(value[i], child.source(), fmt::format("{}[{}]", child.path(), i)), *childSchema,
                        depth + 1);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shipped inputs the estimates use, loaded once.

inline std::string shippedFile(const std::string& relative) {
  return config::dataDirectory() + "/" + relative;
}

template <class Config>
Config loadShipped(const char* root, const std::string& relative) {
  return Config::schema().parse(config::loadConfigFile(root, shippedFile(relative)));
}

inline const workload::ModelConfig& tinyDense() {
  static const auto model = loadShipped<workload::ModelConfig>("model", "workloads/models/tiny-dense.yaml");
  return model;
}

inline const workload::ScenarioConfig& decodeStepScenario() {
  static const auto scenario =
      loadShipped<workload::ScenarioConfig>("scenario", "workloads/scenarios/decode-step.yaml");
  return scenario;
}

/// The chips the model and kernel estimates run on: Jalapeno and an H200.
inline const std::vector<hw::ChipConfig>& referenceChips() {
  static const std::vector<hw::ChipConfig> chips{
      loadShipped<platform::PlatformConfig>("platform", "platforms/jalapeno.yaml").chipConfig(0),
      loadShipped<platform::PlatformConfig>("platform", "platforms/h200-hgx8.yaml").chipConfig(0)};
  return chips;
}

// ---------------------------------------------------------------------------------------------
// Estimates.

inline void checkPlan(const workload::StepPlan& plan, const hw::ChipConfig& chip, const std::string& what) {
  expectMagnitude(plan.weightBytes, what + ": weight bytes");
  expectMagnitude(plan.kvBytes, what + ": KV bytes");
  expectMagnitude(plan.bytesMoved, what + ": bytes moved");
  expectMagnitude(plan.flops, what + ": FLOPs");
  expectMagnitude(plan.vectorOps, what + ": vector operations");
  expectMagnitude(plan.collectiveBytes, what + ": collective bytes");
  expectMagnitude(plan.memoryBoundS(chip), what + ": memory bound (s)");
  expectMagnitude(workload::rooflineBoundS(plan, chip), what + ": roofline bound (s)");
}

/// One decode step of `model` under `scenario` on `chip`: does not fit (ConfigError) or plans a
/// step whose roofline bound is finite and not negative.
inline void checkDecodeEstimate(const workload::ModelConfig& model, const workload::ScenarioConfig& scenario,
                                const hw::ChipConfig& chip, const std::string& what) {
  std::optional<workload::StepPlan> plan;
  try {
    plan = runtime::planDecodeStep(model, scenario, chip);
  } catch (const config::ConfigError&) {
    return;  // does not fit, or the model and scenario cannot make a step: a documented refusal
  } catch (const std::exception& e) {
    unexpected("planDecodeStep (" + what + ")", e);
  }
  checkPlan(*plan, chip, "decode step of " + what);
}

// ---------------------------------------------------------------------------------------------
// Sanity of each accepted configuration: its derived values, and its estimate.

inline void checkChip(const hw::ChipConfig& c, const std::string& what) {
  expectMagnitude(c.ratedPowerW, what + ".rated_power");
  expectPositive(c.hbm.capacityBytes, what + ".hbm.capacity");
  expectPositive(c.hbm.bandwidthBytesPerS, what + ".hbm.bandwidth");
  expectPositive(c.hbm.channelBandwidth(), what + ": HBM bandwidth per channel");
  expect(c.hbm.banks() >= 1, what + ": HBM has no bank");
  for (const tlm::Precision p : {tlm::Precision::kFp32, tlm::Precision::kBf16, tlm::Precision::kFp8,
                                 tlm::Precision::kFp4, tlm::Precision::kInt4}) {
    expectMagnitude(c.tensorCore.peakFlops(p),
                    fmt::format("{}: peak FLOP/s at precision {}", what, static_cast<int>(p)));
  }
  expectPositive(c.sram.capacityBytes, what + ".sram.capacity");
  expectPositive(c.sram.bufferBytes(), what + ": SRAM staging buffer");
  expectMagnitude(c.sram.bandwidthBytesPerS, what + ".sram.bandwidth");
  expectMagnitude(c.interconnect.hopLatencyS, what + ".interconnect.hop_latency");
  expectMagnitude(c.fabricPorts.bandwidthBytesPerS(), what + ": fabric injection bandwidth");
}

inline void checkLink(const hw::LinkConfig& link, const std::string& what) {
  expectPositive(link.bandwidthBytesPerS, what + ".bandwidth");
  expectMagnitude(link.latencyS, what + ".latency");
  expect(link.mtuBytes >= 1, what + ".mtu < 1 B");
  for (const uint64_t bytes : {uint64_t{1}, uint64_t{4096}, uint64_t{1} << 30}) {
    const uint64_t packets = link.packetsFor(bytes);
    expect(packets >= 1, fmt::format("{}: {} bytes make no packet", what, bytes));
    expect(link.wireBytesFor(bytes) >= bytes, fmt::format("{}: {} bytes take fewer wire bytes", what, bytes));
    expect(link.largestPacketFor(bytes) <= static_cast<uint64_t>(link.mtuBytes + link.headerBytes),
           fmt::format("{}: a packet of {} bytes is larger than mtu + header", what, bytes));
  }
}

inline void checkSane(const platform::PlatformConfig& p) {
  expect(p.chipCount() >= 1, "an accepted platform has no chip");
  for (std::size_t i = 0; i < p.chipTypes.size(); ++i) checkChip(p.chipTypes[i], fmt::format("chip_types[{}]", i));
  expectMagnitude(p.host.memoryBytes, "host.memory");
  expectMagnitude(p.host.linkBandwidthBytesPerS, "host.link_bandwidth");
  expectMagnitude(p.host.linkLatencyS, "host.link_latency");
  expectMagnitude(p.network.chipForwardLatencyS, "network.chip_forward_latency");
  expectMagnitude(p.placement.activationBytes, "placement.activation_memory");
  expect(p.placement.tp >= 1 && p.placement.pp >= 1 && p.placement.dp >= 1 && p.placement.ep >= 1,
         "placement tp, pp, dp, ep are not all >= 1");
  expect(p.placement.kvCache.blockTokens >= 1, "placement.kv_cache.block_tokens < 1");
  // The estimate: the shipped tiny dense model's decode step on the platform's decode chips.
  std::optional<runtime::PlatformDecodePlan> plan;
  try {
    plan = runtime::planPlatformDecodeStep(p, tinyDense(), decodeStepScenario());
  } catch (const config::ConfigError&) {
    return;  // the model does not split or fit this way: a documented refusal
  } catch (const std::exception& e) {
    unexpected("planPlatformDecodeStep (tiny-dense, decode-step)", e);
  }
  expect(plan->plans.size() == plan->members.size(), "a platform decode plan has a plan per member");
  for (std::size_t i = 0; i < plan->plans.size(); ++i) {
    const int chip = plan->members[i].chip;
    expect(chip >= 0 && chip < p.chipCount(),
           fmt::format("decode plan member {} is on chip {} of {}", i, chip, p.chipCount()));
    checkPlan(plan->plans[i], p.chipConfig(chip), fmt::format("tiny-dense decode step on chip {}", chip));
  }
}

inline void checkSane(const workload::ModelConfig& m) {
  expect(m.layers >= 1 && m.hidden >= 1 && m.vocab >= 1, "layers, hidden, vocab are not all >= 1");
  expectPositive(m.weightBytes(), "model weight bytes");
  expectMagnitude(m.kvBytesPerTokenPerLayer(), "model KV bytes per token and layer");
  expect(m.activeParams() <= m.totalParams(),
         fmt::format("active parameters {} > total parameters {}", m.activeParams(), m.totalParams()));
  expect(m.embeddingParams() <= m.totalParams(),
         fmt::format("embedding parameters {} > total parameters {}", m.embeddingParams(), m.totalParams()));
  // Weights of at most 32 bits per parameter, plus scales: a wrapped-around count would break this.
  expect(m.weightBytes() <= 8.0 * static_cast<double>(m.totalParams()) + 1e6,
         fmt::format("weight bytes {} > 8 x {} parameters", m.weightBytes(), m.totalParams()));
  for (const hw::ChipConfig& chip : referenceChips()) checkDecodeEstimate(m, decodeStepScenario(), chip, m.name);
}

inline void checkRoutingCounts(workload::RoutingModel& routing, uint32_t layer, uint64_t tokens,
                               const std::string& what) {
  std::vector<uint64_t> counts(static_cast<std::size_t>(routing.experts()), 0);
  routing.route(layer, tokens, counts);
  uint64_t sum = 0;
  for (const uint64_t c : counts) sum += c;
  expect(sum == tokens * static_cast<uint64_t>(routing.topK()),
         fmt::format("{}: layer {} routed {} tokens to {} experts in all, not tokens x topK = {}", what, layer, tokens,
                     sum, tokens * static_cast<uint64_t>(routing.topK())));
}

inline void checkSane(const workload::ScenarioConfig& s) {
  expect(s.batch >= 0 && s.contextLength >= 0 && s.inputTokens >= 0 && s.outputTokens >= 0 && s.requests >= 0,
         "a negative batch, context, length or request count");
  expect(s.randomRangeRatio >= 0.0 && s.randomRangeRatio <= 1.0, "random_range_ratio outside [0, 1]");
  expect(s.warmup() >= 0, "negative warm-up");
  expect(s.requestRecordBytes() <= workload::ScenarioConfig::kMaxRequestRecordBytes,
         fmt::format("request records of {} bytes were accepted", s.requestRecordBytes()));
  expectMagnitude(s.scheduler.stepOverheadS, "scheduler.step_overhead");
  expectMagnitude(s.load.ratePerS, "load.rate_per_s");
  if (s.kind == workload::ScenarioKind::kDecodeStep) {
    for (const hw::ChipConfig& chip : referenceChips()) checkDecodeEstimate(tinyDense(), s, chip, "tiny-dense");
  } else if (s.load.impl != workload::LoadKind::kTrace) {
    // The first requests the load generator sends: lengths within the scenario's, times in order.
    try {
      workload::LoadGenerator load(s, 1);
      const uint64_t maxIn = load.maxInputTokens(), maxOut = load.maxOutputTokens();
      double last = 0.0;
      for (int i = 0; i < 4; ++i) {
        workload::Arrival a;
        if (load.closedLoop()) {
          if (load.users() < 1) break;
          a = load.next(i % load.users(), 0.0);
        } else {
          const std::optional<workload::Arrival> next = load.nextOpen();
          if (!next) break;
          a = *next;
        }
        expect(std::isfinite(a.time) && a.time >= last,
               fmt::format("request {} arrives at {} after {}", i, a.time, last));
        last = a.time;
        expect(a.inputTokens >= 1 && a.inputTokens <= maxIn,
               fmt::format("request {} has {} prompt tokens, not 1..{}", i, a.inputTokens, maxIn));
        expect(a.outputTokens >= 1 && a.outputTokens <= maxOut,
               fmt::format("request {} has {} output tokens, not 1..{}", i, a.outputTokens, maxOut));
      }
    } catch (const config::ConfigError&) {
    } catch (const std::exception& e) {
      unexpected("LoadGenerator", e);
    }
  }
  if (s.routing.impl != workload::RoutingImpl::kTrace) {
    std::unique_ptr<workload::RoutingModel> routing;
    try {
      routing = workload::makeRoutingModel(s.routing, 16, 4, 1);
    } catch (const std::exception& e) {
      unexpected("makeRoutingModel (16 experts, top 4)", e);
    }
    for (uint32_t layer = 0; layer < 3; ++layer) checkRoutingCounts(*routing, layer, 5, "scenario routing");
  }
}

inline void checkSane(const hw::KvCacheConfig& k) {
  expect(k.blockTokens >= 1, "kv_cache.block_tokens < 1");
}

inline void checkSane(const hw::NetworkConfig& n) {
  checkLink(n.link, "link");
  expect(n.fabricSwitch.ports >= 2, "switch.ports < 2");
  expectMagnitude(n.fabricSwitch.hopLatencyS, "switch.hop_latency");
  expectPositive(n.fabricSwitch.inputBufferBytes, "switch.input_buffer");
}

inline void checkSane(const workload::ValidationDataset& d) {
  for (const workload::ValidationPoint& p : d.points) {
    expect(p.gpus >= 0 && p.tp >= 1 && p.pp >= 1 && p.dp >= 1 && p.ep >= 1 && p.isl >= 0 && p.osl >= 0 &&
               p.concurrency >= 0 && p.requests >= 0,
           "validation point " + p.id + ": a negative or zero count");
    for (const workload::MeasuredMetric& m : p.metrics) {
      expectPositive(m.value, "validation point " + p.id + ": metric value");
      expectPositive(m.si(), "validation point " + p.id + ": metric value in SI units");
    }
  }
}

inline void checkSane(const workload::SoftwareStackConfig& s) {
  for (const double e :
       {s.gemmEfficiency, s.attentionEfficiency, s.moeEfficiency, s.memoryEfficiency, s.mixedInputEfficiency}) {
    expect(std::isfinite(e) && e > 0.0 && e <= 1.0, fmt::format("an efficiency {} outside (0, 1]", e));
  }
  for (const char* op : {"attention", "experts", "qkv", "ffn"}) {
    for (const bool mixed : {false, true}) {
      const double e = s.computeEfficiency(op, mixed);
      expect(std::isfinite(e) && e > 0.0 && e <= 1.0, fmt::format("compute efficiency of {} = {}", op, e));
    }
  }
  for (const double t :
       {s.collectiveLatencyS, s.stepOverheadS, s.kernelLaunchS, s.requestOverheadS, s.requestOverheadPerTokenS}) {
    expect(std::isfinite(t) && t >= 0.0 && t <= config::kMaxConfigTimeS, fmt::format("a stack time of {} s", t));
  }
}

inline void checkSane(const workload::KernelDataset& d) {
  expectMagnitude(d.nominalSmClockHz, "nominal_sm_clock");
  for (const workload::MeasuredKernel& k : d.kernels) {
    expectPositive(k.seconds, "kernel " + k.id + ": time");
    expectMagnitude(k.bytes, "kernel " + k.id + ": bytes");
    expect(k.m >= 0 && k.k >= 0 && k.n >= 0 && k.batch >= 0 && k.context >= 0 && k.heads >= 0 && k.kvHeads >= 0 &&
               k.headDim >= 0,
           "kernel " + k.id + ": a negative shape");
    for (const hw::ChipConfig& chip : referenceChips()) {
      std::optional<workload::StepPlan> plan;
      try {
        plan = workload::planKernel(k, chip);
      } catch (const config::ConfigError&) {
        continue;  // the chip cannot run it (precision)
      } catch (const std::exception& e) {
        unexpected("planKernel (" + k.id + ")", e);
      }
      checkPlan(*plan, chip, "kernel " + k.id + " on " + chip.name);
    }
  }
  for (const workload::MeasuredPower& p : d.power) {
    expectPositive(p.watts, "power point " + p.id + ": watts");
    expect(std::isfinite(p.duty) && p.duty > 0.0 && p.duty <= 1.0, "power point " + p.id + ": duty outside (0, 1]");
    expectMagnitude(p.smClockHz, "power point " + p.id + ": sm_clock");
    expectMagnitude(p.launchTimeS, "power point " + p.id + ": launch time");
  }
}

}  // namespace scoville::test::fuzz
