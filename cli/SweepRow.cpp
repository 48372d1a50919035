// results::rowOf: a report.json read into a row of results.json, every field it copies checked
// (type, finite, positive where divided by) and the first bad one named by its JSON pointer. The
// rest of cli/SweepResults.h (frontiers, combine, points.csv, loadRows) is cli/SweepResults.cpp.
#include "cli/SweepResults.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

using Json = nlohmann::ordered_json;

namespace scoville::cli::results {

namespace {

/// A report field that is missing or not of the type a row needs; rowOf names the report.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* typeOf(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    default: return value.is_number() ? "a number" : value.type_name();
  }
}

/// The field at JSON pointer `pointer` of `report`.
const nlohmann::json& reportField(const nlohmann::json& report, const std::string& pointer) {
  const nlohmann::json::json_pointer at(pointer);
  if (report.contains(at)) return report[at];
  nlohmann::json::json_pointer missing = at;  // name the outermost field that is not there
  while (!missing.parent_pointer().empty() && !report.contains(missing.parent_pointer())) {
    missing = missing.parent_pointer();
  }
  throw BadField(fmt::format("{} is missing", missing.to_string()));
}

bool hasField(const nlohmann::json& report, const std::string& pointer) {
  return report.contains(nlohmann::json::json_pointer(pointer));
}

const nlohmann::json& textField(const nlohmann::json& report, const std::string& pointer) {
  const nlohmann::json& value = reportField(report, pointer);
  if (!value.is_string()) throw BadField(fmt::format("{} is {}, not a string", pointer, typeOf(value)));
  return value;
}

/// A finite number; with `orNull`, null too (a statistic of no samples).
const nlohmann::json& numberField(const nlohmann::json& report, const std::string& pointer, bool orNull = false) {
  const nlohmann::json& value = reportField(report, pointer);
  if (orNull && value.is_null()) return value;
  if (!value.is_number() || !std::isfinite(value.get<double>())) {
    throw BadField(fmt::format("{} is {}, not a finite number{}", pointer,
                               value.is_number() ? "infinite" : typeOf(value), orNull ? " or null" : ""));
  }
  return value;
}

const nlohmann::json& positiveField(const nlohmann::json& report, const std::string& pointer) {
  const nlohmann::json& value = numberField(report, pointer);
  if (value.get<double>() <= 0) throw BadField(fmt::format("{} is {}, not a positive number", pointer, value.dump()));
  return value;
}

/// The four statistics a row keeps of a latency distribution.
Json latency(const nlohmann::json& report, const std::string& pointer) {
  Json out;
  for (const char* statistic : {"mean", "median", "p90", "p99"}) {
    out[statistic] = numberField(report, pointer + "/" + statistic, true);
  }
  return out;
}

Json nullLatency() {
  return {{"mean", nullptr}, {"median", nullptr}, {"p90", nullptr}, {"p99", nullptr}};
}

/// A throughput map: `keys` of the object at `pointer`, each a finite number.
Json throughput(const nlohmann::json& report, const std::string& pointer,
                std::initializer_list<const char*> keys = {"input", "output", "total"}) {
  Json out;
  for (const char* key : keys) out[key] = numberField(report, pointer + "/" + key);
  return out;
}

/// Per chip and window, the largest sustained power of any chip (null where the run is shorter).
Json sustainedPerChip(const nlohmann::json& report) {
  std::map<double, double> worst;
  std::vector<double> windows;
  const nlohmann::json& chips = reportField(report, "/power/chips");
  if (!chips.is_array()) throw BadField(fmt::format("/power/chips is {}, not an array", typeOf(chips)));
  for (std::size_t c = 0; c < chips.size(); ++c) {
    const std::string chip = fmt::format("/power/chips/{}/sustained", c);
    const nlohmann::json& sustained = reportField(report, chip);
    if (!sustained.is_array()) throw BadField(fmt::format("{} is {}, not an array", chip, typeOf(sustained)));
    for (std::size_t i = 0; i < sustained.size(); ++i) {
      const std::string window = fmt::format("{}/{}", chip, i);
      const double w = numberField(report, window + "/window_s").get<double>();
      if (worst.count(w) == 0) {
        windows.push_back(w);
        worst[w] = -1.0;
      }
      const nlohmann::json& max = numberField(report, window + "/max_w", true);
      if (!max.is_null()) worst[w] = std::max(worst[w], max.get<double>());
    }
  }
  Json out = Json::array();
  for (const double w : windows) {
    out.push_back({{"window_s", w}, {"max_w", worst[w] < 0 ? Json(nullptr) : Json(worst[w])}});
  }
  return out;
}

/// Joules per token from tokens per joule (null when no token was made).
Json perToken(const nlohmann::json& tokensPerJoule) {
  const double t = tokensPerJoule.get<double>();
  return t > 0 ? Json(1.0 / t) : Json(nullptr);
}

}  // namespace

Row rowOf(const nlohmann::json& report, const std::string& source) {
  Row row;
  row.source = source;
  try {
    const std::string kind = textField(report, "/results/kind").get<std::string>();
    Json s;
    s["platform"] = textField(report, "/inputs/platform/name");
    s["model"] = textField(report, "/inputs/model/name");
    s["scenario"] = textField(report, "/inputs/scenario/name");
    s["kind"] = kind;
    const nlohmann::json& overrides = reportField(report, "/inputs/overrides");
    if (!overrides.is_array()) throw BadField(fmt::format("/inputs/overrides is {}, not an array", typeOf(overrides)));
    for (std::size_t i = 0; i < overrides.size(); ++i) textField(report, fmt::format("/inputs/overrides/{}", i));
    s["overrides"] = overrides;
    const nlohmann::json& seed = reportField(report, "/inputs/seed");
    if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<std::int64_t>() >= 0)) {
      throw BadField(fmt::format("/inputs/seed is {}, not a seed (an integer >= 0)", seed.dump()));
    }
    s["seed"] = seed;
    if (kind == "serving") {
      const std::string m = "/results/metrics";
      s["chips"] = positiveField(report, m + "/chips");
      s["concurrency"] = hasField(report, "/results/load/concurrency")
                             ? Json(numberField(report, "/results/load/concurrency", true))
                             : Json(nullptr);
      s["interactivity_tok_per_s_per_user"] = numberField(report, m + "/interactivity_tok_per_s_per_user");
      for (const char* metric : {"ttft_s", "tpot_s", "itl_s", "e2el_s"}) {
        s[metric] = latency(report, m + "/" + metric);
      }
      s["throughput_tok_per_s"] = throughput(report, m + "/throughput_tok_per_s");
      s["throughput_per_chip_tok_per_s"] = throughput(report, m + "/throughput_per_chip_tok_per_s");
      s["throughput_per_kw_rated_tok_per_s"] = throughput(report, m + "/throughput_per_kw_tok_per_s");
      const double ratedPerChip = numberField(report, m + "/rated_power_w").get<double>() / s["chips"].get<double>();
      if (hasField(report, "/power/serving")) {
        s["throughput_per_kw_average_tok_per_s"] =
            throughput(report, "/power/serving/throughput_per_kw_average_tok_per_s", {"output", "total"});
        s["power"] = {
            {"rated_w_per_chip", ratedPerChip},
            {"average_w_per_chip", numberField(report, "/power/serving/average_power_per_chip_w")},
            {"sustained_w_per_chip", sustainedPerChip(report)},
            {"energy_per_output_token_j", perToken(numberField(report, "/power/serving/tokens_per_joule/output"))}};
      } else {  // a platform without an energy model (power.modelled false)
        s["throughput_per_kw_average_tok_per_s"] = {{"output", nullptr}, {"total", nullptr}};
        s["power"] = {{"rated_w_per_chip", ratedPerChip},
                      {"average_w_per_chip", nullptr},
                      {"sustained_w_per_chip", Json::array()},
                      {"energy_per_output_token_j", nullptr}};
      }
    } else if (kind == "decode_step") {
      // A single decode step: every user gets a token per step; no load, no power window. Per
      // chip and per kW count the whole platform (idle replicas included), as a serving run does.
      const double chips = positiveField(report, "/platform/chips").get<double>();
      const double rated = numberField(report, "/platform/totals/rated_power_w").get<double>();
      const double output = numberField(report, "/results/output_tokens_per_s").get<double>();
      const nlohmann::json& batch = numberField(report, "/results/batch");
      s["chips"] = reportField(report, "/platform/chips");
      s["concurrency"] = batch;
      s["interactivity_tok_per_s_per_user"] = numberField(report, "/results/tokens_per_s_per_user");
      const double step = numberField(report, "/results/step_time_s").get<double>();
      s["ttft_s"] = nullLatency();
      s["tpot_s"] = {{"mean", step}, {"median", step}, {"p90", step}, {"p99", step}};
      s["itl_s"] = s["tpot_s"];
      s["e2el_s"] = nullLatency();
      s["throughput_tok_per_s"] = {{"input", 0.0}, {"output", output}, {"total", output}};
      s["throughput_per_chip_tok_per_s"] = {{"input", 0.0}, {"output", output / chips}, {"total", output / chips}};
      const double perKw = rated > 0 ? output / (rated / 1000.0) : 0.0;
      s["throughput_per_kw_rated_tok_per_s"] = {{"input", 0.0}, {"output", perKw}, {"total", perKw}};
      const bool platformPower = hasField(report, "/power/platform");
      const double average = platformPower ? numberField(report, "/power/platform/average_w").get<double>() : 0.0;
      const double perKwAverage = average > 0 ? output / (average / 1000.0) : 0.0;
      s["throughput_per_kw_average_tok_per_s"] = {{"output", perKwAverage}, {"total", perKwAverage}};
      s["power"] = {
          {"rated_w_per_chip", rated / chips},
          {"average_w_per_chip", average > 0 ? Json(average / chips) : Json(nullptr)},
          {"sustained_w_per_chip", hasField(report, "/power/chips") ? sustainedPerChip(report) : Json::array()},
          {"energy_per_output_token_j",
           platformPower && batch.get<double>() > 0
               ? Json(numberField(report, "/power/platform/energy_j").get<double>() / batch.get<double>())
               : Json(nullptr)}};
    } else {
      throw BadField(fmt::format("/results/kind is '{}', not serving or decode_step", kind));
    }
    row.summary = std::move(s);
  } catch (const BadField& e) {
    throw std::runtime_error(fmt::format("{}: not a complete scoville report ({})", source, e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not a complete scoville report ({})", source, e.what()));
  }
  return row;
}

}  // namespace scoville::cli::results
