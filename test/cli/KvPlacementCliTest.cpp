// KV-cache placement in serving runs, end to end (scenario key serving.kv_cache_placement,
// runtime/KvFetcher.h): local keeps every KV byte on its own chip; spill_to_remote reads the
// overflow from the next chip's HBM over the fabric once a chip's own share is full;
// offload_to_host holds what local HBM cannot in host memory, over the host link; combinations
// not modelled are refused. tiny-dense on jalapeno-8 (tp 8): each run takes well under a second.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

class KvPlacementCliTest : public ServingCliFixture {
 protected:
  /// `users` users, eight measured requests of 512 + 128 tokens of tiny-dense on jalapeno-8.
  static std::vector<std::string> load(int users) {
    return join({"-m", "tiny-dense", "-p", "jalapeno-8"}, smallLoad(users, 8, 512, 128));
  }

  /// The HBM capacity that leaves each chip room for `tokens` tokens of KV (the roomy run's
  /// weights and activation memory below it).
  static std::vector<std::string> kvRoom(const Json& roomy, double tokens) {
    const Json& chip = roomy["chips"][0];
    const double perToken =
        chip["kv_cache_capacity_bytes"].get<double>() / roomy["kv_cache_capacity_tokens_per_replica"].get<double>();
    const double bytes =
        chip["weight_bytes"].get<double>() + chip["activation_memory_bytes"].get<double>() + 4096 + tokens * perToken;
    return {"--set",
            "platform.chip_types[0].hbm.capacity=" + std::to_string(static_cast<long>(std::ceil(bytes / 1e6))) + " MB"};
  }

  static std::vector<std::string> placement(const std::string& p) {
    return {"--set", "scenario.serving.kv_cache_placement=" + p};
  }

  static double tpot(const Json& r) { return r["metrics"]["inferencex"]["median_tpot"].get<double>(); }

  /// Bytes the fabric's switch carried (collectives, and spilled KV).
  static double switchBytes(const std::string& reportFile) {
    const Json report = Json::parse(readFile(reportFile));
    return report["stats"]["platform"]["groups"]["network"]["groups"]["switch0"]["stats"]["bytes"]["value"]
        .get<double>();
  }

  /// What the chips' fetch engines moved, summed.
  static double fetched(const Json& r) {
    double sum = 0.0;
    for (const Json& c : r["chips"])
      sum += c["off_chip_kv_read_bytes"].get<double>() + c["off_chip_kv_written_bytes"].get<double>();
    return sum;
  }
};

TEST_F(KvPlacementCliTest, LocalMovesNoKvAcrossChipsAndSpillToRemoteDoesOnceTheOwnShareIsFull) {
  const Json roomy = serve("roomy", load(4));
  ASSERT_FALSE(roomy.empty());
  // Four users hold at most 4 x 640 tokens; each chip gets room for 3,300 in all.
  const std::vector<std::string> tight = kvRoom(roomy, 3300);
  const Json local = serve("local", join(join(load(4), tight), placement("local")));
  const Json spill = serve("spill", join(join(load(4), tight), placement("spill_to_remote")));
  const Json spillRoomy = serve("spill-roomy", join(load(4), placement("spill_to_remote")));
  ASSERT_FALSE(local.empty());
  ASSERT_FALSE(spill.empty());
  ASSERT_FALSE(spillRoomy.empty());

  EXPECT_EQ(local["kv_placement"]["policy"], "local_first");
  EXPECT_EQ(local["kv_placement"]["cross_chip_kv_bytes"].get<double>(), 0.0);
  EXPECT_EQ(local["kv_placement"]["host_kv_bytes"].get<double>(), 0.0);
  EXPECT_EQ(local["preemptions"], 0) << "the local cache holds the load";
  EXPECT_FALSE(local["chips"][0].contains("kv_donor"));

  // Half of each chip's KV memory is lent, so the own share (about 1,650 tokens) overflows.
  const Json& cache = spill["replicas"][0]["kv_cache"];
  EXPECT_EQ(spill["kv_placement"]["policy"], "spill_to_remote");
  EXPECT_EQ(cache["peak_blocks"], cache["capacity_blocks"]) << "the own share filled first";
  EXPECT_GT(cache["peak_remote_blocks"].get<int>(), 0);
  EXPECT_NEAR(cache["remote_capacity_blocks"].get<double>(), cache["capacity_blocks"].get<double>(), 1.0);
  const double cross = spill["kv_placement"]["cross_chip_kv_bytes"].get<double>();
  EXPECT_GT(cross, 0.0);
  EXPECT_EQ(cache["cross_chip_kv_bytes"].get<double>(), cross);
  EXPECT_DOUBLE_EQ(fetched(spill), cross) << "the fetch engines moved exactly the bytes the plans placed off the chip";
  EXPECT_EQ(spill["preemptions"], 0) << "own share and lent share together hold the load";
  EXPECT_EQ(spill["metrics"]["e2el_s"]["count"], 8) << "every measured request completed";
  EXPECT_EQ(spill["mirrored_chips"], 0);
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(spill["chips"][c]["kv_donor"], "chip" + std::to_string((c + 1) % 8)) << "a ring over the pool";
  }
  // The spilled reads cross the fabric and cost time.
  EXPECT_GE(switchBytes(dir.file("spill/report.json")), switchBytes(dir.file("local/report.json")) + 0.99 * cross);
  EXPECT_GT(tpot(spill), 1.05 * tpot(local));

  // With room to spare the own share never fills: nothing spills.
  EXPECT_EQ(spillRoomy["kv_placement"]["cross_chip_kv_bytes"].get<double>(), 0.0);
  EXPECT_EQ(spillRoomy["replicas"][0]["kv_cache"]["peak_remote_blocks"], 0);
}

TEST_F(KvPlacementCliTest, OffloadToHostHoldsWhatLocalHbmCannotOverTheHostLink) {
  const Json roomy = serve("roomy", load(8));
  ASSERT_FALSE(roomy.empty());
  // Eight users need 8 x 640 tokens; local HBM holds about 3,300.
  const std::vector<std::string> tight = kvRoom(roomy, 3300);
  const Json local = serve("local", join(join(load(8), tight), placement("local")));
  const Json offload = serve("offload", join(join(load(8), tight), placement("offload_to_host")));
  ASSERT_FALSE(local.empty());
  ASSERT_FALSE(offload.empty());
  EXPECT_GT(local["preemptions"].get<int>(), 0) << "local placement has to preempt";
  EXPECT_EQ(offload["preemptions"], 0) << "host memory holds the rest";
  const Json& cache = offload["replicas"][0]["kv_cache"];
  EXPECT_GT(cache["peak_host_blocks"].get<int>(), 0);
  const double host = offload["kv_placement"]["host_kv_bytes"].get<double>();
  EXPECT_GT(host, 0.0);
  EXPECT_EQ(offload["kv_placement"]["cross_chip_kv_bytes"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(fetched(offload), host);
  EXPECT_TRUE(offload["chips"][0]["kv_donor"].is_null());
  EXPECT_EQ(offload["metrics"]["e2el_s"]["count"], 8);
  // The host link (64 GB/s) is far slower than HBM: decode steps reading host KV take longer.
  EXPECT_GT(tpot(offload), 1.5 * tpot(roomy));
}

TEST_F(KvPlacementCliTest, PlacementsNotModelledAreRefusedWithTheKeyAndNoReport) {
  const auto rejected = [&](const std::string& name, const std::vector<std::string>& args, const std::string& key) {
    std::vector<std::string> full = {"run", "-q", "-m", "tiny-dense", "-s", "inferencex-1k1k", "--out", dir.file(name)};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult r = runScoville(full);
    EXPECT_EQ(r.exitCode, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file(name + "/report.json"))) << name;
  };
  // One chip: nobody to lend it HBM.
  rejected("alone", placement("spill_to_remote"), "serving.kv_cache_placement");
  rejected("platform-alone", {"--set", "platform.placement.kv_cache.placement.impl=spill_to_remote"},
           "placement.kv_cache.placement");
  rejected("share", {"--set", "scenario.serving.kv_remote_share=0.3"}, "kv_remote_share");
  rejected("share-range", join(placement("spill_to_remote"), {"--set", "scenario.serving.kv_remote_share=1.5"}),
           "kv_remote_share");
  rejected("offload-swap", join(placement("offload_to_host"), {"--set", "platform.placement.kv_cache.preemption=swap"}),
           "preemption");
}

}  // namespace
}  // namespace scoville::test
