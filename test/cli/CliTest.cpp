// The scoville executable end to end, run as a child process: bad input must exit 2 with a
// classed, located message and leave no report; good input writes one deterministic report.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "test/cli/CliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;

class CliTest : public CliFixture {};

TEST_F(CliTest, UnknownTopLevelKey) {
  int line = 0;
  const std::string file = platformVariant("description:", "descripton:", &line);
  expectConfigError({"--platform", file}, "unknown-key",
                    {file + ":" + std::to_string(line) + ":1", "'descripton'", "did you mean 'description'"});
}

TEST_F(CliTest, MisspelledNestedKey) {
  int line = 0;
  const std::string file = platformVariant("    bandwidth: 7.2 TB/s", "    bandwdth: 7.2 TB/s", &line);
  expectConfigError(
      {"--platform", file}, "unknown-key",
      {file + ":" + std::to_string(line) + ":5", "platform.chip_types[0].hbm", "did you mean 'bandwidth'"});
}

TEST_F(CliTest, WrongType) {
  int line = 0;
  const std::string file = platformVariant("channels: 192", "channels: many", &line);
  expectConfigError({"--platform", file}, "wrong-type",
                    {file + ":" + std::to_string(line), "platform.chip_types[0].hbm.channels", "expects an integer"});
}

TEST_F(CliTest, MapWhereAQuantityBelongs) {
  const std::string file = platformVariant("clock: 1.8 GHz\n    array_rows", "clock: {value: 1.8}\n    array_rows");
  expectConfigError({"--platform", file}, "wrong-type", {"platform.chip_types[0].tensor_core.clock", "a frequency"});
}

TEST_F(CliTest, BadUnit) {
  int line = 0;
  const std::string file = platformVariant("bandwidth: 7.2 TB/s", "bandwidth: 7.2 TB", &line);
  expectConfigError(
      {"--platform", file}, "bad-unit",
      {file + ":" + std::to_string(line), "platform.chip_types[0].hbm.bandwidth", "expected a bandwidth"});
}

TEST_F(CliTest, MissingUnit) {
  const std::string file = platformVariant("rated_power: 700 W", "rated_power: 700");
  expectConfigError({"--platform", file}, "bad-unit", {"platform.chip_types[0].rated_power", "has no unit", "700 W"});
}

TEST_F(CliTest, NegativeBandwidth) {
  const std::string file = platformVariant("bandwidth: 7.2 TB/s", "bandwidth: -7.2 TB/s");
  expectConfigError({"--platform", file}, "out-of-range", {file + ":", "platform.chip_types[0].hbm.bandwidth", "> 0"});
}

TEST_F(CliTest, ZeroClock) {
  const std::string file = platformVariant("clock: 1.8 GHz\n    array_rows", "clock: 0 GHz\n    array_rows");
  expectConfigError({"--platform", file}, "out-of-range", {file + ":", "platform.chip_types[0].tensor_core.clock"});
}

TEST_F(CliTest, MissingRequiredKey) {
  const std::string file = platformVariant("    controller_latency: 40 ns ", "    ");
  expectConfigError({"--platform", file}, "missing-key", {file + ":", "platform.chip_types[0].hbm.controller_latency"});
}

TEST_F(CliTest, DuplicateKey) {
  const std::string file = platformVariant("    channels: 192", "    channels: 192\n    channels: 96");
  expectConfigError({"--platform", file}, "duplicate-key", {file + ":", "platform.chip_types[0].hbm.channels"});
}

TEST_F(CliTest, LockstepGroupsMustDivideTheChannels) {
  int line = 0;
  const std::string file = platformVariant("lockstep_channels: 32", "lockstep_channels: 7", &line);
  expectConfigError(
      {"--platform", file}, "invalid-config",
      {file + ":" + std::to_string(line), "platform.chip_types[0].hbm", "lockstep_channels must divide channels"});
}

TEST_F(CliTest, LoadIssueIsOverlappedOrSerial) {
  int line = 0;
  const std::string file = platformVariant("load_issue: overlapped", "load_issue: pipelined", &line);
  expectConfigError(
      {"--platform", file}, "out-of-range",
      {file + ":" + std::to_string(line), "platform.chip_types[0].sram.load_issue", "overlapped, serial"});
}

// RTL co-simulation (docs/cosim.md) only runs where the Verilated block fits the tensor core.
TEST_F(CliTest, RtlCosimNeedsTheVerilatedGeometry) {
  int line = 0;
  const std::string file = platformVariant("array_rows: 128\n", "array_rows: 128\n    impl: rtl\n", &line);
  expectConfigError({"--platform", file}, "invalid-config",
                    {file + ":" + std::to_string(line), "tensor_core", "impl rtl and lockstep need array_rows = "});
  const std::string tc = "platform.chip_types[0].tensor_core.";
  const std::vector<std::string> small = {"--set", tc + "array_rows=8", "--set", tc + "array_cols=8"};
  std::vector<std::string> args = small;
  args.insert(args.end(), {"--set", tc + "impl=lockstep", "--set", tc + "rtl.model=my_block"});
  expectConfigError(args, "invalid-config", {"rtl.model must name an RTL block this build has"});
  expectConfigError({"--set", tc + "impl=verilog"}, "out-of-range", {"tensor_core.impl", "tlm, rtl, lockstep"});
  args = small;
  args.insert(args.end(), {"--set", tc + "impl=rtl", "--set", tc + "macs_per_cell_per_cycle.fp8=1.5"});
  expectConfigError(args, "invalid-config", {"macs_per_cell_per_cycle", "whole number"});
  expectConfigError({"--rtl-vcd", dir.file("rtl.vcd")}, "invalid-config",
                    {"--rtl-vcd", "no chip of platform 'jalapeno' has tensor_core.impl rtl or lockstep"});
}

// Runaway configurations are refused before anything runs, not killed for memory hours later.
TEST_F(CliTest, RunawayServingRunsAreRejectedUpFront) {
  // A million users: two million requests' records of 1,024 token times.
  expectConfigError({"-s", "inferencex-8k1k", "--set", "scenario.load.concurrency=1000000"}, "out-of-range",
                    {"scenario.load.concurrency", "GiB of request records", "limit"});
  expectConfigError({"-s", "inferencex-8k1k", "--set", "scenario.requests=10000000"}, "out-of-range",
                    {"scenario.requests", "GiB of request records"});
  // A billion-token prompt (or context) is beyond the schema's range.
  expectConfigError({"-s", "inferencex-8k1k", "--set", "scenario.input_tokens=1000000000"}, "out-of-range",
                    {"scenario.input_tokens"});
  expectConfigError({"--set", "scenario.context_length=1000000000"}, "out-of-range", {"scenario.context_length"});
}

TEST_F(CliTest, MissingFile) {
  const std::string file = dir.file("no-such-platform.yaml");
  expectConfigError({"--platform", file}, "file-not-found", {file});
}

TEST_F(CliTest, EmptyFile) {
  const std::string file = dir.file("empty.yaml");
  writeFile(file, "");
  expectConfigError({"--model", file}, "empty-file", {file});
}

TEST_F(CliTest, YamlSyntaxError) {
  int line = 0;
  const std::string file = platformVariant("channels: 192", "channels: [192", &line);
  const ProcessResult r = expectConfigError({"--platform", file}, "yaml-syntax", {file + ":"});
  EXPECT_NE(r.err.find("YAML syntax error"), std::string::npos);
}

TEST_F(CliTest, UnknownPlatformName) {
  expectConfigError({"--platform", "jalapno"}, "unknown-name", {"--platform jalapno", "did you mean 'jalapeno'"});
}

TEST_F(CliTest, ConflictingOverrides) {
  expectConfigError(
      {"--set", "platform.chip_types[0].hbm.channels=64", "--set", "platform.chip_types[0].hbm.channels=32"},
      "conflicting-override", {"platform.chip_types[0].hbm.channels", "'64'", "'32'"});
}

TEST_F(CliTest, OverrideOfAnUnknownKeyNamesTheOption) {
  expectConfigError({"--set", "platform.chip_types[0].hbm.bandwdth=8 TB/s"}, "unknown-key",
                    {"--set platform.chip_types[0].hbm.bandwdth=8 TB/s", "did you mean 'bandwidth'"});
}

TEST_F(CliTest, OverrideWithAnUnknownRoot) {
  expectConfigError({"--set", "chip.hbm.channels=64"}, "bad-override", {"platform", "model", "scenario"});
}

TEST_F(CliTest, OutputDirectoryNotWritable) {
  const std::string blocker = dir.file("a-file");
  writeFile(blocker, "not a directory");
  const ProcessResult r = runScoville({"run", "--out", blocker + "/sub"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("error[output-not-writable]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(blocker + "/sub"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(blocker + "/sub/report.json"));
}

// Issue 38: an output never replaces or writes through a link, a FIFO or a device, and no two
// outputs share a file; all refused before simulating, leaving what was there untouched.
TEST_F(CliTest, OutputsRefuseLinksSpecialFilesAndSharedPaths) {
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string target = dir.file("target");
  writeFile(target, "keep");
  const std::string link = dir.file("link");
  fs::create_symlink(target, link);
  expectConfigError({"--trace", fifo}, "output-not-writable", {"--trace", "is a FIFO"});
  expectConfigError({"--vcd", link}, "output-not-writable", {"--vcd", "is a symbolic link"});
  expectConfigError({"--trace", "/dev/null"}, "output-not-writable", {"--trace", "is a device"});
  expectConfigError({"--trace", dir.path()}, "output-not-writable", {"is a directory"});
  expectConfigError({"--trace", dir.file("t"), "--vcd", dir.file("out/../t")}, "output-not-writable",
                    {"--vcd", "also the file of --trace"});
  expectConfigError({"--trace", report()}, "output-not-writable", {"also the file of --out (report.json)"});
  // A link where the run's own output goes is refused too, not followed.
  fs::create_directories(out());
  fs::create_symlink(target, dir.file("out/power.csv"));
  expectConfigError({}, "output-not-writable", {"--out (power.csv)", "is a symbolic link"});
  EXPECT_EQ(readFile(target), "keep");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(dir.file("t")));
}

// Issue 38: a time past its documented bound, or a quantity that overflows once its unit is
// applied or is implausibly small, is refused at load time with the key; before, these ran and
// gave wrapped (shorter) times, "inf" in the report, or spun for ever.
TEST_F(CliTest, TimesAndQuantitiesOutsideTheirPlausibleRangesAreRefusedAtLoad) {
  const std::string chip = "platform.chip_types[0].";
  const std::vector<std::pair<std::string, std::string>> cases{
      {chip + "hbm.controller_latency=1e8 s", "implausible: a time must lie within 0 .. 60 s"},
      {chip + "fabric_ports.link.latency=1e8 s", "implausible: a time"},
      {"scenario.scheduler.step_overhead=1e6 s", "implausible: a time"},
      {chip + "hbm.bandwidth=100 B/s", "implausible: a bandwidth must lie within 100 MB/s"},
      {chip + "hbm.bandwidth=1e-300 TB/s", "implausible"},
      {chip + "hbm.bandwidth=1e308 TB/s", "overflows once its unit is applied"},
      {chip + "hbm.capacity=1e308 TB", "overflows"},
      {chip + "tensor_core.clock=1e300 GHz", "overflows"},
  };
  for (const auto& [set, message] : cases) {
    SCOPED_TRACE(set);
    const std::string key = set.substr(0, set.find('='));
    expectConfigError({"-p", "jalapeno-8", "-m", "tiny-moe", "-s", "inferencex-1k1k", "--set", set},
                      message.find("overflows") != std::string::npos ? "bad-unit" : "out-of-range", {key, message});
  }
}

// Issue 38: a run that reaches --max-sim-time or --timeout fails with a clear error and leaves no
// report; the limits themselves are checked.
TEST_F(CliTest, SimulatedAndWallClockLimitsEndARunWithAnErrorAndNoReport) {
  ProcessResult r = runScoville({"run", "--max-sim-time", "1 ms", "--out", out()});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_NE(r.err.find("error[simulation]: the run reached --max-sim-time 1 ms"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(report()));
  // 100 MB/s, the plausible floor, makes the 141 GB decode step last about 1400 s simulated and
  // some 10 s of wall time: the half-second alarm ends it.
  const auto start = std::chrono::steady_clock::now();
  r = runScoville(
      {"run", "--timeout", "0.5 s", "--set", "platform.chip_types[0].hbm.bandwidth=100 MB/s", "--out", out()});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_NE(r.err.find("error[simulation]: the run took longer than --timeout 0.5 s"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 8.0);
  EXPECT_FALSE(fs::exists(report()));
  expectConfigError({"--max-sim-time", "1e7 s"}, "out-of-range", {"--max-sim-time", "at most 1e+06 s"});
  expectConfigError({"--timeout", "-1 s"}, "out-of-range", {"--timeout"});
  expectConfigError({"--timeout", "5"}, "bad-unit", {"--timeout"});
}

// Issue 38: Boost reads "-1" as 2^64-1 for an unsigned option; every count and seed refuses it.
TEST_F(CliTest, NegativeSeedsAndCountsAreUsageErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", "--seed", "-1"},
                                               {"run", "--seed", "18446744073709551616"},
                                               {"run", "--seed", "1e3"},
                                               {"sweep", "-m", "tiny-dense", "-s", "inferencex-1k1k", "--jobs", "-1"},
                                               {"memory", "hbm2-8ch", "--requests", "-5"},
                                               {"memory", "hbm2-8ch", "--request-size", "-64"}}) {
    const std::string& option = args[args.size() - 2];  // the bad value comes last
    SCOPED_TRACE(args[0] + " " + option);
    std::vector<std::string> withOut = args;
    withOut.insert(withOut.end(), {"--out", out()});
    const ProcessResult r = runScoville(withOut);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("error[usage]: " + option + " expects an integer from 0 to"), std::string::npos) << r.err;
  }
}

// Issue 38: the decode step routes its MoE tokens by the scenario's routing and the run's seed
// (it used uniform routing with seed 1 whatever was asked), and a routing trace is checked
// against the model when it is read.
TEST_F(CliTest, TheDecodeStepRoutesByTheScenarioAndTheSeedAndTracesAreCheckedAtLoad) {
  const auto stepTime = [this](std::vector<std::string> args) {
    args.insert(args.begin(), {"run", "-q", "-p", "jalapeno-8", "-m", "tiny-moe", "-s", "decode-step", "--set",
                               "scenario.batch=8", "--out", dir.file("ok")});
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(readFile(dir.file("ok/report.json")))["results"]["step_time_s"].get<double>();
  };
  const double seed1 = stepTime({});
  EXPECT_EQ(stepTime({"--seed", "1"}), seed1);
  EXPECT_NE(stepTime({"--seed", "2"}), seed1);
  EXPECT_NE(stepTime({"--set", "scenario.routing={impl: skewed, zipf_exponent: 5}"}), seed1);

  const std::string header = "layer,experts\n";
  std::string rows;
  for (int layer = 0; layer < 3; ++layer) rows += std::to_string(layer) + ",0 1 2 3\n";
  writeFile(dir.file("three-layers.csv"), header + rows);
  writeFile(dir.file("layer-9.csv"), header + rows + "3,0 1 2 3\n9,0 1 2 3\n");
  for (const char* scenario : {"decode-step", "inferencex-1k1k"}) {
    SCOPED_TRACE(scenario);
    const std::vector<std::string> base{"-p", "jalapeno-8", "-m", "tiny-moe", "-s", scenario, "--set"};
    std::vector<std::string> args = base;
    args.push_back("scenario.routing={impl: trace, file: " + dir.file("three-layers.csv") + "}");
    expectConfigError(args, "invalid-config", {dir.file("three-layers.csv"), "no row for MoE layer 3"});
    args = base;
    args.push_back("scenario.routing={impl: trace, file: " + dir.file("layer-9.csv") + "}");
    expectConfigError(args, "invalid-config", {dir.file("layer-9.csv") + ":6", "layer 9 is not a MoE layer"});
    args = base;
    args.push_back("scenario.routing={impl: trace, file: " + dir.file("missing.csv") + "}");
    expectConfigError(args, "file-not-found", {dir.file("missing.csv")});
  }
}

// Issue 38's smaller cases: each used to be accepted, misplaced or misnamed.
TEST_F(CliTest, FilesThatAreNotOneYamlDocumentAndValuesInsideASetAreReportedWhereTheyAre) {
  fs::create_directories(dir.file("dir.yaml"));
  expectConfigError({"-p", dir.file("dir.yaml")}, "file-not-found", {"is a directory, not a file"});
  ASSERT_EQ(::mkfifo(dir.file("fifo.yaml").c_str(), 0600), 0);
  expectConfigError({"-p", dir.file("fifo.yaml")}, "file-not-found", {"is not a regular file"});
  // A second document was silently ignored.
  const std::string two = dir.file("two.yaml");
  writeFile(two, inlinedJalapeno() + "---\nname: other\n");
  expectConfigError({"-p", two}, "yaml-syntax", {two + ":", "a second YAML document"});
  // An included file that is not YAML is shown by its start only, never whole.
  std::string secret = "first line of a file that is not YAML and must not be echoed whole\n";
  for (int i = 0; i < 40; ++i) secret += "secret" + std::to_string(i) + ":x:1000:1000::/home:/bin/sh\n";
  writeFile(dir.file("not-yaml.txt"), secret);
  std::string platform = readFile(kJalapeno);
  platform.replace(platform.find("include: chips/jalapeno.yaml"), 28, "include: " + dir.file("not-yaml.txt"));
  writeFile(dir.file("includes-text.yaml"), platform);
  const ProcessResult r = expectConfigError({"-p", dir.file("includes-text.yaml")}, "wrong-type",
                                            {dir.file("not-yaml.txt"), "'first line of a file", "(shortened)"});
  EXPECT_EQ(r.err.find("secret"), std::string::npos) << r.err;
  // A value inside a list given by --set is located at the --set, not at the file's line 1.
  expectConfigError({"-p", "jalapeno-8", "--set", "platform.chips=[{type: jalapeno, count: x}]"}, "wrong-type",
                    {"--set platform.chips=[{type: jalapeno, count: x}]: key 'platform.chips[0].count'"});
  // concurrency=0 was reported as a missing key.
  expectConfigError(
      {"-p", "jalapeno-8", "-m", "tiny-moe", "-s", "inferencex-1k1k", "--set", "scenario.load.concurrency=0"},
      "out-of-range", {"--set scenario.load.concurrency=0", "'scenario.load.concurrency' = '0'"});
}

// Issue 38: the memory a run needs is estimated before elaboration and a run over --max-memory
// (default: the machine's available memory) is refused with the numbers; a 8192-chip ring ended
// in bad_alloc after 15 s, power.max_bins = 2^30 would have needed about 8.6 GB per chip.
TEST_F(CliTest, ARunOverItsMemoryLimitIsRefusedUpFrontWithTheNumbers) {
  const std::vector<std::string> ring{"-m",    "tiny-dense",
                                      "--set", "platform.chips=[{type: jalapeno, count: 512}]",
                                      "--set", "platform.network={topology: ring}",
                                      "--set", "platform.placement.dp=512",
                                      "--set", "scenario.batch=512"};
  std::vector<std::string> args = ring;
  args.insert(args.end(), {"--max-memory", "200 MB"});
  expectConfigError(args, "does-not-fit",
                    {"--max-memory 200 MB", "would need about 331.3 MB", "fabric routes", "262144 ordered chip pairs"});
  // 8192 chips: about 736 GB of routes alone, more than any machine has available.
  args = {"-m",    "tiny-dense",
          "--set", "platform.chips=[{type: jalapeno, count: 8192}]",
          "--set", "platform.network={topology: ring}",
          "--set", "platform.placement.dp=8192",
          "--set", "scenario.batch=8192"};
  expectConfigError(args, "does-not-fit", {"--max-memory auto", "GB"});
  expectConfigError(
      {"-p", "jalapeno-8", "-m", "tiny-moe", "--set", "platform.power.max_bins=1073741824", "--max-memory", "4 GiB"},
      "does-not-fit", {"its power timelines alone", "power.max_bins = 1073741824"});
  expectConfigError({"--max-memory", "lots"}, "bad-unit", {"--max-memory lots"});
  const ProcessResult r = runScoville({"run", "-v", "--out", out()});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("estimated memory: "), std::string::npos) << r.out;
}

TEST_F(CliTest, ModelThatDoesNotFit) {
  expectConfigError({"--set", "model.weight_precision=fp32"}, "does-not-fit", {"282.2 GB", "216 GB"});
}

TEST_F(CliTest, UnknownOption) {
  const ProcessResult r = runScoville({"run", "--platfrom", "jalapeno", "--out", out()});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("error[usage]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(report()));
}

TEST_F(CliTest, TimingModeMustBeLtOrAt) {
  const ProcessResult r = runScoville({"run", "--timing", "ca", "--out", out()});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--timing must be lt or at"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(report()));
}

TEST_F(CliTest, ApproximatelyTimedRunMatchesLooselyTimedAndChecksTheProtocol) {
  ASSERT_EQ(runScoville({"run", "-q", "--out", dir.file("lt"), "--set", "scenario.context_length=1024"}).exitCode, 0);
  const ProcessResult r =
      runScoville({"run", "-q", "--timing", "at", "--out", out(), "--set", "scenario.context_length=1024"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto lt = nlohmann::json::parse(readFile(dir.file("lt/report.json")));
  const auto at = nlohmann::json::parse(readFile(report()));
  EXPECT_EQ(at["inputs"]["timing"], "at");
  EXPECT_GT(at["protocol"]["checked_transactions"].get<double>(), 1000.0);
  EXPECT_EQ(at["protocol"]["violations"], 0);
  EXPECT_NEAR(at["results"]["step_time_s"].get<double>() / lt["results"]["step_time_s"].get<double>(), 1.0, 0.05);
}

TEST_F(CliTest, UnknownCommandAndNoCommandAreUsageErrors) {
  EXPECT_EQ(runScoville({"simulate"}).exitCode, 2);
  EXPECT_EQ(runScoville({}).exitCode, 2);
  EXPECT_EQ(runScoville({"platform"}).exitCode, 2);
}

TEST_F(CliTest, EveryCommandHasHelp) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{{"--help"},
                                                                                    {"run", "--help"},
                                                                                    {"platform", "show", "--help"},
                                                                                    {"config-docs", "--help"},
                                                                                    {"sweep", "--help"},
                                                                                    {"merge", "--help"},
                                                                                    {"report", "--help"}}) {
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 0) << args[0];
    EXPECT_NE(r.out.find("usage"), std::string::npos) << r.out;
  }
}

TEST_F(CliTest, RunWritesAWholeReportAndItIsDeterministic) {
  const ProcessResult first = runScoville({"run", "--out", out(), "--seed", "7"});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  EXPECT_NE(first.out.find("report: " + report()), std::string::npos) << first.out;
  const std::string reportText = readFile(report());
  const auto json = nlohmann::json::parse(reportText);
  EXPECT_EQ(json["schema_version"], 3);
  EXPECT_EQ(json["inputs"]["seed"], 7);
  EXPECT_EQ(json["inputs"]["platform"]["name"], "jalapeno");
  EXPECT_GT(json["results"]["step_time_s"].get<double>(), 0.0);
  EXPECT_GE(json["results"]["step_time_s"].get<double>(), json["results"]["roofline"]["bound_s"].get<double>());
  // The report and the power timeline, and no temporary files beside them.
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(out())) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"power.csv", "report.json"}));

  const ProcessResult second = runScoville({"run", "--out", dir.file("again"), "--seed", "7", "-q"});
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_TRUE(second.out.empty()) << "--quiet prints nothing on success";
  EXPECT_EQ(readFile(dir.file("again/report.json")), reportText) << "same inputs and seed: byte-identical report";
}

TEST_F(CliTest, OverridesChangeTheResultAndAreRecorded) {
  ASSERT_EQ(runScoville({"run", "-q", "--out", out()}).exitCode, 0);
  const ProcessResult r =
      runScoville({"run", "-q", "--out", dir.file("fast"), "--set", "platform.chip_types[0].hbm.bandwidth=9 TB/s"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto base = nlohmann::json::parse(readFile(report()));
  const auto fast = nlohmann::json::parse(readFile(dir.file("fast/report.json")));
  EXPECT_EQ(fast["inputs"]["overrides"][0], "platform.chip_types[0].hbm.bandwidth=9 TB/s");
  const double speedup = base["results"]["step_time_s"].get<double>() / fast["results"]["step_time_s"].get<double>();
  // 7.2 -> 9 TB/s is 1.25x: a memory-bound step gains almost all of it, and never more.
  EXPECT_GT(speedup, 1.2);
  EXPECT_LE(speedup, 1.25 * (1 + 1e-9));
}

}  // namespace
}  // namespace scoville::test
