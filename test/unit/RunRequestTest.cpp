// The typed `scoville run` request (cli/RunRequest.h): its argument list parses back into the same
// request (the options are defined once), and the requests sweeps and validation points make.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "cli/RunRequest.h"
#include "cli/Sweep.h"
#include "cli/ValidationRun.h"

namespace scoville::cli {
namespace {

TEST(RunRequest, TheDefaultRequestRoundTripsThroughItsArguments) {
  const RunRequest defaults;
  EXPECT_EQ(RunRequest::fromArgs(defaults.toArgs()), defaults);
  EXPECT_EQ(RunRequest::fromArgs({}), defaults);
  EXPECT_EQ(defaults.commandLine().front(), kRunCommandName);
}

TEST(RunRequest, EveryFieldRoundTripsThroughItsArguments) {
  RunRequest r;
  r.inputs = InputOptions{"my platform.yaml",
                          "tiny-moe",
                          "inferencex-1k1k",
                          {"platform.placement.tp=2", "platform.chip_types[0].hbm.bandwidth=8 TB/s",
                           "platform.placement.disaggregation={prefill_chips: [0, 1], decode_chips: [2, 3]}",
                           "scenario.requests=8", "platform.placement.tp=2"}};
  r.out = "out dir/x";
  r.seed = 12345678901234ull;
  r.timing = "at";
  r.quiet = true;
  r.exactAllChips = true;
  r.trace = "t.json";
  r.traceStart = "20 ms";
  r.traceDuration = "5 us";
  r.vcd = "w.vcd";
  r.vcdInterval = "10 ns";
  r.rtlVcd = "rtl.vcd";
  const RunRequest back = RunRequest::fromArgs(r.toArgs());
  EXPECT_EQ(back, r);
  EXPECT_EQ(back.inputs.sets, r.inputs.sets) << "the overrides keep their order and repeats";

  RunRequest verbose;
  verbose.verbose = true;
  EXPECT_EQ(RunRequest::fromArgs(verbose.toArgs()), verbose);
  RunRequest changed = r;
  changed.vcdInterval = "1 us";
  EXPECT_NE(changed, r);
}

TEST(RunRequest, ValuesThatLookLikeOptionsRoundTripAsNameEqualsValue) {
  // Found by the run-args fuzz target: "--out -q" reads as --out missing its value and --quiet.
  RunRequest r;
  r.inputs = InputOptions{"-p", "--model", "-", {"-x=1", "platform.placement.tp=2"}};
  r.out = "-q";
  r.timing = "-o";
  r.trace = "--vcd";
  r.maxSimTime = "-1 s";
  const std::vector<std::string> args = r.toArgs();
  EXPECT_EQ(args[0], "--platform=-p");
  EXPECT_EQ(RunRequest::fromArgs(args), r);
  EXPECT_EQ(RunRequest::fromArgs(RunRequest().toArgs()), RunRequest());
  EXPECT_EQ(std::count(args.begin(), args.end(), "--set"), 1) << "a value without a dash stays a word of its own";
}

TEST(RunRequest, ShortOptionsParseToTheSameRequest) {
  const RunRequest a = RunRequest::fromArgs(
      {"-p", "jalapeno-8", "-m", "tiny-moe", "-s", "agent-multiturn", "-o", "o", "-q", "--set", "scenario.requests=8"});
  const RunRequest b =
      RunRequest::fromArgs({"--platform", "jalapeno-8", "--model", "tiny-moe", "--scenario", "agent-multiturn", "--out",
                            "o", "--quiet", "--set", "scenario.requests=8"});
  EXPECT_EQ(a, b);
}

TEST(RunRequest, BadArgumentsAreUsageErrors) {
  EXPECT_THROW(RunRequest::fromArgs({"--no-such-option"}), boost::program_options::error);
  EXPECT_THROW(RunRequest::fromArgs({"--seed", "x"}), boost::program_options::error);
  EXPECT_THROW(RunRequest::fromArgs({"-q", "-v"}), boost::program_options::error);
}

TEST(RunRequest, ASweepPointsRunKeepsItsArgumentOrder) {
  // sweep.json's run_args: the inputs, seed, timing, output, --quiet, then every --set.
  sweep::Spec spec;
  spec.platforms = {"jalapeno-8"};
  spec.model = "tiny-moe";
  spec.scenario = "inferencex-1k1k";
  spec.sets = {"scenario.requests=8"};
  spec.axes = {sweep::Axis{"concurrency", {"4"}}};
  spec.seed = 7;
  spec.timing = "at";
  const std::vector<sweep::Point> points = sweep::expandGrid(spec, [](const std::string&) { return std::size_t{1}; });
  ASSERT_EQ(points.size(), 1u);
  const RunRequest request = sweep::runRequest(spec, points[0], "d");
  EXPECT_EQ(request.commandLine(),
            (std::vector<std::string>{"run", "--platform", "jalapeno-8", "--model", "tiny-moe", "--scenario",
                                      "inferencex-1k1k", "--seed", "7", "--timing", "at", "--out", "d", "--quiet",
                                      "--set", "scenario.requests=8", "--set", "scenario.load.concurrency=4"}));
  EXPECT_EQ(RunRequest::fromArgs(request.toArgs()), request);
}

TEST(RunRequest, AValidationPointsRunSetsTheChipsParallelismLengthsLoadAndTheExtraSets) {
  workload::ValidationPoint p;
  p.platform = "b200-hgx8";
  p.model = "gpt-oss-120b";
  p.scenario = "inferencex-8k1k";
  p.gpus = 2;
  p.dp = 2;
  p.ep = 2;
  p.isl = 8192;
  p.osl = 1024;
  p.concurrency = 512;
  p.sets = {"model.compute_precision=fp8"};
  p.stack = "trtllm-b200";
  const RunRequest r = validationRunRequest(p, "out/x");
  EXPECT_EQ(r.inputs.platform, "b200-hgx8");
  EXPECT_EQ(r.inputs.model, "gpt-oss-120b");
  EXPECT_EQ(r.inputs.scenario, "inferencex-8k1k");
  EXPECT_EQ(r.out, "out/x");
  EXPECT_TRUE(r.quiet);
  EXPECT_EQ(r.seed, RunRequest{}.seed);
  EXPECT_EQ(r.timing, RunRequest{}.timing);
  EXPECT_EQ(r.inputs.sets,
            (std::vector<std::string>{
                "platform.chips[0].count=2", "platform.placement.tp=1", "platform.placement.pp=1",
                "platform.placement.dp=2", "platform.placement.ep=2", "scenario.input_tokens=8192",
                "scenario.output_tokens=1024", "scenario.load.impl=closed_loop", "scenario.load.concurrency=512",
                "scenario.requests=512", "scenario.software_stack=trtllm-b200", "model.compute_precision=fp8"}));
  EXPECT_EQ(RunRequest::fromArgs(r.toArgs()), r);

  p.gpus = 0;
  p.isl = 0;
  p.osl = 0;
  p.stack = "";
  p.requests = 64;
  p.sets = {};
  EXPECT_EQ(validationRunRequest(p, "o").inputs.sets,
            (std::vector<std::string>{"platform.placement.tp=1", "platform.placement.pp=1", "platform.placement.dp=2",
                                      "platform.placement.ep=2", "scenario.load.impl=closed_loop",
                                      "scenario.load.concurrency=512", "scenario.requests=64"}));
}

}  // namespace
}  // namespace scoville::cli
