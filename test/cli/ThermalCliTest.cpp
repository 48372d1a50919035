// The thermal model end to end (docs/thermal.md): a serving run with it reports the temperatures,
// leakage and closed forms; a thermal governor holds the die at a junction limit the run would pass,
// and costs throughput; a limit it never reaches changes nothing; cooling is one key; bad thermal
// input is refused naming its key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

const std::string kThermal = "platform.chip_types[0].thermal={include: ../thermal/jalapeno.yaml}";

class ThermalCliTest : public ServingCliFixture {
 protected:
  /// GPT-OSS 120B on jalapeno-8, 8 users with 2k-token prompts and 256-token answers, with `sets`.
  /// Every step simulated (a thermal governor's run is, so the free run is too).
  nlohmann::json serve(const std::string& name, const std::vector<std::string>& sets) {
    std::vector<std::string> args{"run",
                                  "-q",
                                  "--sample-period",
                                  "1",
                                  "-p",
                                  "jalapeno-8",
                                  "-m",
                                  "gpt-oss-120b",
                                  "-s",
                                  "inferencex-8k1k",
                                  "--out",
                                  dir.file(name),
                                  "--set",
                                  "scenario.load.concurrency=8",
                                  "--set",
                                  "scenario.requests=8",
                                  "--set",
                                  "scenario.input_tokens=2048",
                                  "--set",
                                  "scenario.output_tokens=256"};
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    if (r.exitCode != 0) return nlohmann::json::object();
    return nlohmann::json::parse(readFile(dir.file(name + "/report.json")));
  }

  std::string rejected(const std::vector<std::string>& sets) {
    std::vector<std::string> args{"run", "-q", "--out", dir.file("rejected")};
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    return r.err;
  }
};

TEST_F(ThermalCliTest, AThermalRunReportsTemperaturesLeakageAndWhereTheChipSettles) {
  const nlohmann::json plain = serve("plain", {});
  const nlohmann::json hot = serve("thermal", {kThermal});
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(hot.empty());
  EXPECT_FALSE(plain["power"]["chips"][0].contains("thermal")) << "no thermal section: none in the report";
  // Timing is untouched by the thermal model without a governor (it only prices leakage).
  EXPECT_EQ(plain["results"]["metrics"], hot["results"]["metrics"]);
  for (const nlohmann::json& chip : hot["power"]["chips"]) {
    const nlohmann::json& t = chip["thermal"];
    ASSERT_TRUE(t.is_object()) << chip["chip"];
    EXPECT_EQ(t["cooling"], "liquid");
    EXPECT_EQ(t["ambient_c"], 40.0);
    const double start = t["die_c"]["start"];
    const double peak = t["die_c"]["peak"];
    EXPECT_GT(start, 40.0) << "the steady state of idle, over the coolant";
    EXPECT_GT(peak, start + 1.0) << "serving heats the die";
    EXPECT_LT(peak, 105.0);
    EXPECT_GE(peak, t["die_c"]["mean"].get<double>());
    EXPECT_EQ(t["time_throttled_s"], 0.0);
    const nlohmann::json& settle = t["steady_state_at_average"];
    EXPECT_FALSE(settle["runaway"].get<bool>());
    EXPECT_GT(settle["die_c"].get<double>(), start);
    EXPECT_GT(t["sustainable_w"].get<double>(), chip["rated_w"].get<double>()) << "liquid holds more than 700 W";
    EXPECT_EQ(t["binding_limit"], "rating");
    ASSERT_EQ(t["time_constants_s"].size(), 4u);
    EXPECT_GT(t["time_constants_s"][0].get<double>(), 1.0) << "the cooler's";
    EXPECT_EQ(t["timeline"]["time_s"].size(), t["timeline"]["die_c"].size());
  }
  // The die starts below the leakage's 53 C reference and stays there: it leaks less than the
  // configured static power, so the same work costs less energy.
  EXPECT_LT(hot["power"]["chips"][0]["thermal"]["leakage_scale_end"].get<double>(), 1.0);
  EXPECT_LT(hot["power"]["chips"][0]["energy_j"].get<double>(), plain["power"]["chips"][0]["energy_j"].get<double>());
}

TEST_F(ThermalCliTest, AThermalGovernorHoldsTheJunctionLimitAndCostsThroughput) {
  const std::vector<std::string> governed{kThermal, "platform.power.governor.impl=thermal"};
  const nlohmann::json free = serve("free", {kThermal});
  std::vector<std::string> tight = governed;
  tight.push_back("platform.chip_types[0].thermal.junction_limit=46 C");
  const nlohmann::json held = serve("held", tight);
  ASSERT_FALSE(free.empty());
  ASSERT_FALSE(held.empty());
  const double freePeak = free["power"]["chips"][0]["thermal"]["die_c"]["peak"];
  ASSERT_GT(freePeak, 46.5) << "the limit must be one the free run passes";
  const nlohmann::json& t = held["power"]["chips"][0]["thermal"];
  EXPECT_LE(t["die_c"]["peak"].get<double>(), 46.2) << "held at the limit, within a step's lag";
  EXPECT_GT(t["time_throttled_s"].get<double>(), 0.0);
  EXPECT_EQ(held["power"]["chips"][0]["dvfs"]["governor"], "thermal");
  EXPECT_TRUE(held["power"]["chips"][0]["dvfs"]["cap_w"].is_null());
  EXPECT_GT(held["power"]["chips"][0]["dvfs"]["changes"].get<int>(), 0);
  EXPECT_LT(held["results"]["metrics"]["throughput_tok_per_s"]["output"].get<double>(),
            free["results"]["metrics"]["throughput_tok_per_s"]["output"].get<double>());
  // A limit the run never nears: the governor never acts, and the run is the free one.
  const nlohmann::json loose = serve("loose", governed);
  EXPECT_EQ(loose["results"]["metrics"], free["results"]["metrics"]);
  EXPECT_EQ(loose["power"]["chips"][0]["dvfs"]["changes"], 0);
  EXPECT_EQ(loose["power"]["chips"][0]["thermal"]["time_throttled_s"], 0.0);
}

TEST_F(ThermalCliTest, AirCoolingRunsHotterAndHoldsLessThanLiquid) {
  const nlohmann::json air = serve("air", {kThermal, "platform.chip_types[0].thermal.cooling=air"});
  const nlohmann::json liquid = serve("liquid", {kThermal});
  ASSERT_FALSE(air.empty());
  ASSERT_FALSE(liquid.empty());
  const nlohmann::json& a = air["power"]["chips"][0]["thermal"];
  const nlohmann::json& l = liquid["power"]["chips"][0]["thermal"];
  EXPECT_EQ(a["kind"], "air");
  EXPECT_GT(a["steady_state_at_average"]["die_c"].get<double>(), l["steady_state_at_average"]["die_c"].get<double>());
  EXPECT_LT(a["sustainable_w"].get<double>(), l["sustainable_w"].get<double>());
  EXPECT_GT(a["time_constants_s"][0].get<double>(), l["time_constants_s"][0].get<double>()) << "a heavier heat sink";
}

TEST_F(ThermalCliTest, WaveformsCarryTheTemperatures) {
  const std::string vcd = dir.file("w.vcd");
  const ProcessResult r =
      runScoville({"run", "-q", "--out", dir.file("vcd"), "--set", kThermal, "--vcd", vcd, "--trace-start", "5 ms",
                   "--trace-duration", "5 ms", "--vcd-interval", "100 us"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string text = readFile(vcd);
  EXPECT_NE(text.find("die_c $end"), std::string::npos);
  EXPECT_NE(text.find("hbm_c $end"), std::string::npos);
  const ProcessResult plain =
      runScoville({"run", "-q", "--out", dir.file("plain"), "--vcd", dir.file("p.vcd"), "--trace-duration", "1 ms"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(readFile(dir.file("p.vcd")).find("die_c"), std::string::npos) << "no thermal model, no temperature";
}

TEST_F(ThermalCliTest, BadThermalInputIsRefusedNamingItsKey) {
  const std::string t = "platform.chip_types[0].thermal";
  EXPECT_NE(rejected({kThermal, t + ".cooling=water"}).find("'water' is not one of its coolers (liquid, air)"),
            std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".junction_limit=105"}).find("junction_limit"), std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".junction_limit=105 W"}).find("expected a temperature"), std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".junction_limit=378 K"}).find("junction_limit"), std::string::npos)
      << "absolute temperatures are Celsius: 378 is out of range";
  EXPECT_NE(rejected({kThermal, t + ".junction_limit=40 C"}).find("above cooler 'liquid''s ambient"),
            std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".die.resistance=0.02 W/K"}).find("expected a thermal resistance"),
            std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".die.capacitance=0 J/K"}).find("die.capacitance"), std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".start=hot"}).find("expected idle, rated, ambient or a power"), std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".leakage.doubling=0.1 K"}).find("leakage.doubling"), std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".coolers[1].name=liquid"}).find("coolers[1].name"), std::string::npos);
  EXPECT_NE(rejected({kThermal, t + ".die.resistence=0.02 K/W"}).find("resistance"), std::string::npos)
      << "a misspelt key, with the right one offered";
  EXPECT_NE(rejected({kThermal, "platform.chip_types[0].power=~"}).find("needs a 'power' section"), std::string::npos);
}

}  // namespace
}  // namespace scoville::test
