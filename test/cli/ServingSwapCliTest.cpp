// Swap preemption in serving runs, end to end through the scoville executable: a KV cache too
// small for the load swaps requests out to host memory and back over each chip's host link, the
// copies cost the time the link and HBM take, every request completes, and swap and recompute
// differ. tiny-dense on one jalapeno chip: each run takes well under a second.
#include <gtest/gtest.h>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Shipped.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class ServingSwapCliTest : public ServingCliFixture {
 protected:
  /// Four users, eight measured requests of 512 + 256 tokens of tiny-dense.
  const std::vector<std::string> load = join({"-m", "tiny-dense"}, smallLoad(4, 8, 512, 256));
  const workload::ModelConfig model = shippedModel("tiny-dense");
  const double perToken = model.kvBytesPerTokenPerLayer() * model.layers;

  /// Overrides giving the chip room for the four prompts (4 x 512 tokens) but not for all four
  /// answers on top, under `preemption`.
  std::vector<std::string> tight(const Json& roomy, const std::string& preemption) const {
    const double weights = roomy["chips"][0]["weight_bytes"].get<double>();
    const double hbm = std::ceil((weights + 4096 + 4 * 640 * perToken) / 1e6);  // MB
    return {"--set", "platform.chip_types[0].hbm.capacity=" + std::to_string(static_cast<int>(hbm)) + " MB", "--set",
            "platform.placement.kv_cache.preemption=" + preemption};
  }

  static double duration(const Json& r) {
    return r["window"]["end_s"].get<double>() - r["window"]["start_s"].get<double>();
  }
};

TEST_F(ServingSwapCliTest, FullKvCacheSwapsRequestsToHostOverTheHostLinkAndEveryRequestCompletes) {
  const Json roomy = serve("roomy", load);
  ASSERT_FALSE(roomy.empty());
  EXPECT_EQ(roomy["preemptions"], 0);
  EXPECT_EQ(roomy["kv_swap"]["swap_outs"], 0);
  const Json r = serve("swap", join(load, tight(roomy, "swap")));
  ASSERT_FALSE(r.empty());
  const Json& swaps = r["kv_swap"];
  const Json& cache = r["replicas"][0]["kv_cache"];
  EXPECT_GT(swaps["swap_outs"].get<int>(), 0);
  EXPECT_GT(swaps["swap_ins"].get<int>(), 0);
  EXPECT_LE(swaps["swap_ins"].get<int>(), swaps["swap_outs"].get<int>());
  EXPECT_EQ(r["preemptions"], swaps["swap_outs"]) << "every preemption swapped: the host had room";
  EXPECT_EQ(r["recompute_preemptions"], 0);
  EXPECT_EQ(cache["swap_outs"], swaps["swap_outs"]);
  EXPECT_GT(cache["host_capacity_blocks"].get<double>(), 0.0);
  EXPECT_EQ(r["metrics"]["ttft_s"]["count"], 8) << "every measured request completed";
  EXPECT_EQ(r["metrics"]["e2el_s"]["count"], 8);

  // Whole blocks of 16 tokens moved, and exactly those bytes crossed the chip's host link.
  const double out = swaps["swapped_out_bytes"].get<double>();
  const double in = swaps["swapped_in_bytes"].get<double>();
  const double block = 16 * perToken;
  EXPECT_GT(out, 0.0);
  EXPECT_EQ(std::fmod(out, block), 0.0);
  EXPECT_EQ(std::fmod(in, block), 0.0);
  EXPECT_EQ(swaps["swapped_bytes"].get<double>(), out + in);
  const Json link = Json::parse(readFile(dir.file("swap/report.json")))["stats"]["host"]["groups"]["host_link0"];
  EXPECT_EQ(link["stats"]["bytes_to_host"]["value"].get<double>(), out);
  EXPECT_EQ(link["stats"]["bytes_to_chip"]["value"].get<double>(), in);

  // The copies take at least their bytes over the 64 GB/s link, and the steps wait for them.
  const double linkBandwidth = shippedPlatform("jalapeno").host.linkBandwidthBytesPerS;
  const double swapTime = swaps["time_s"].get<double>();
  EXPECT_GE(swapTime, (out + in) / linkBandwidth);
  EXPECT_LT(swapTime, 1.2 * (out + in) / linkBandwidth) << "link-bound: HBM is 100 times faster";
  EXPECT_GT(duration(r), duration(roomy)) << "KV pressure costs time";
  EXPECT_GT(r["metrics"]["itl_s"]["max"].get<double>(), roomy["metrics"]["itl_s"]["max"].get<double>());

  // An eight times slower host link: the same swaps take about eight times longer, and so does the run.
  const Json slow =
      serve("slow", join(join(load, tight(roomy, "swap")), {"--set", "platform.host.link_bandwidth=8 GB/s"}));
  ASSERT_FALSE(slow.empty());
  EXPECT_EQ(slow["kv_swap"]["swapped_bytes"], swaps["swapped_bytes"]);
  EXPECT_GT(slow["kv_swap"]["time_s"].get<double>(), 7.0 * swapTime);
  EXPECT_GT(duration(slow), duration(r) + 5.0 * swapTime);

  // Approximately timed: the same swaps (uncontended traffic times alike in both modes).
  const Json at = serve("at", join(join(load, tight(roomy, "swap")), {"--timing", "at"}));
  ASSERT_FALSE(at.empty());
  EXPECT_EQ(at["kv_swap"]["swapped_bytes"], swaps["swapped_bytes"]);
  EXPECT_NEAR(at["kv_swap"]["time_s"].get<double>(), swapTime, 0.05 * swapTime);
  EXPECT_EQ(at["metrics"]["ttft_s"]["count"], 8);
}

TEST_F(ServingSwapCliTest, SwapAndRecomputeOnTheSameOverflowingLoadBothFinishWithDifferentTiming) {
  const Json roomy = serve("roomy", load);
  ASSERT_FALSE(roomy.empty());
  const Json swap = serve("swap", join(load, tight(roomy, "swap")));
  const Json recompute = serve("recompute", join(load, tight(roomy, "recompute")));
  ASSERT_FALSE(swap.empty());
  ASSERT_FALSE(recompute.empty());
  for (const Json* r : {&swap, &recompute}) {
    EXPECT_GT((*r)["preemptions"].get<int>(), 0);
    EXPECT_EQ((*r)["metrics"]["ttft_s"]["count"], 8);
  }
  EXPECT_EQ(recompute["kv_swap"]["swap_outs"], 0);
  EXPECT_EQ(recompute["recompute_preemptions"], recompute["preemptions"]);
  EXPECT_EQ(swap["recompute_preemptions"], 0);
  // Recompute re-runs the victims' prompts and generated tokens; swap moves them instead.
  const double sent = swap["load"]["sent_requests"].get<double>();
  EXPECT_LE(swap["replicas"][0]["prefill_tokens"].get<double>(), sent * 512);
  EXPECT_GT(recompute["replicas"][0]["prefill_tokens"].get<double>(),
            swap["replicas"][0]["prefill_tokens"].get<double>());
  EXPECT_EQ(recompute["kv_swap"]["time_s"], 0.0);
  EXPECT_GT(swap["kv_swap"]["time_s"].get<double>(), 0.0);
  EXPECT_NE(swap["window"]["end_s"], recompute["window"]["end_s"]);
  EXPECT_NE(swap["replicas"][0]["busy_time_s"], recompute["replicas"][0]["busy_time_s"]);

  // A host too small for any victim's blocks: swap falls back to recompute, preemption by
  // preemption, and the run is exactly the recompute run.
  const Json cramped = serve("cramped", join(join(load, tight(roomy, "swap")), {"--set", "platform.host.memory=8 MB"}));
  ASSERT_FALSE(cramped.empty());
  EXPECT_EQ(cramped["kv_swap"]["swap_outs"], 0);
  EXPECT_EQ(cramped["recompute_preemptions"], recompute["recompute_preemptions"]);
  EXPECT_EQ(cramped["metrics"], recompute["metrics"]);
}

TEST_F(ServingSwapCliTest, MirroredTensorParallelRanksSwapExactlyLikeSimulatedOnes) {
  // tiny-moe on two chips of tp 2: rank 1 mirrors rank 0, copies included.
  const auto args = join({"-m", "tiny-moe", "-p", "jalapeno-8", "--set", "platform.chips[0].count=2", "--set",
                          "platform.placement.tp=2", "--set", "platform.placement.activation_memory=0 B", "--set",
                          "platform.placement.kv_cache.preemption=swap", "--sample-period", "1"},
                         smallLoad(4, 8, 512, 256));
  const Json roomy = serve("roomy", args);
  ASSERT_FALSE(roomy.empty());
  const double weights = roomy["chips"][0]["weight_bytes"].get<double>();
  const double perChipToken = roomy["chips"][0]["kv_cache_capacity_bytes"].get<double>() /
                              roomy["kv_cache_capacity_tokens_per_replica"].get<double>();
  const std::string hbm = std::to_string(static_cast<int>(std::ceil((weights + 4 * 600 * perChipToken) / 1e3))) + " kB";
  const auto tightArgs = join(args, {"--set", "platform.chip_types[0].hbm.capacity=" + hbm});
  const Json mirrored = serve("mirrored", tightArgs);
  const Json exact = serve("exact", join(tightArgs, {"--exact-all-chips"}));
  ASSERT_FALSE(mirrored.empty());
  ASSERT_FALSE(exact.empty());
  EXPECT_EQ(mirrored["mirrored_chips"], 1);
  EXPECT_EQ(exact["mirrored_chips"], 0);
  EXPECT_GT(mirrored["kv_swap"]["swap_outs"].get<int>(), 0);
  EXPECT_EQ(mirrored["kv_swap"], exact["kv_swap"]);
  EXPECT_EQ(mirrored["metrics"], exact["metrics"]);
  EXPECT_EQ(mirrored["window"], exact["window"]);
  // Both chips' slices count; only the exact run's second chip moved its own over its link.
  const Json stats = Json::parse(readFile(dir.file("exact/report.json")))["stats"]["host"]["groups"];
  EXPECT_EQ(stats["host_link0"]["stats"]["bytes_to_host"]["value"].get<double>() +
                stats["host_link1"]["stats"]["bytes_to_host"]["value"].get<double>(),
            exact["kv_swap"]["swapped_out_bytes"].get<double>());
}

TEST_F(ServingSwapCliTest, SwapWithoutHostMemoryForItIsRejectedWithTheFileAndKey) {
  const auto expectError = [&](std::vector<std::string> args, const std::vector<std::string>& mentions) {
    args.insert(args.begin(), {"run", "-m", "tiny-dense", "-s", "inferencex-8k1k", "--set",
                               "platform.placement.kv_cache.preemption=swap"});
    args.insert(args.end(), {"--out", dir.file("bad")});
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("error[invalid-config]"), std::string::npos) << r.err;
    for (const std::string& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << m << " not in: " << r.err;
    EXPECT_FALSE(fs::exists(dir.file("bad/report.json")));
  };
  expectError({"--set", "platform.host.memory=0 B"},
              {"platform.placement.kv_cache.preemption", "'platform.host.memory' is 0 B"});
  // 100 kB over the host's 8 chips holds no 64 kB block of tiny-dense.
  expectError({"--set", "platform.host.memory=100 kB"}, {"platforms/jalapeno.yaml", "'platform.host.memory'",
                                                         "'platform.host.chips_per_host' 8", "12.5 kB", "65.54 kB"});
}

}  // namespace
}  // namespace scoville::test
