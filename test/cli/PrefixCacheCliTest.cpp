// Prefix caching end to end: multi-turn conversations whose earlier turns stay cached prefill only
// their new tokens (time to first token falls, decoding does not change), the hit rate is the
// cached share of the prompts, and what is not modelled is refused naming the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

class PrefixCacheCliTest : public ServingCliFixture {};

TEST_F(PrefixCacheCliTest, ConversationsReuseTheirEarlierTurnsAndPrefillOnlyTheNewTokens) {
  const auto load =
      join({"-m", "tiny-dense", "-p", "jalapeno", "--set", "scenario.multi_turn.turns=4"}, smallLoad(2, 12, 512, 64));
  const Json off = serve("off", load);
  const Json on = serve("on", join(load, {"--set", "scenario.serving.prefix_caching=true"}));
  ASSERT_FALSE(off.empty() || on.empty());
  EXPECT_FALSE(off.contains("prefix_cache"));
  const Json& pc = on["prefix_cache"];
  const auto prompt = pc["prompt_tokens"].get<double>();
  const auto cached = pc["cached_prompt_tokens"].get<double>();
  EXPECT_DOUBLE_EQ(pc["hit_rate"].get<double>(), cached / prompt);
  // Turns 2-4 hold the earlier turns (576, 1152, 1728 tokens) before 512 new ones: more than
  // half of all prompt tokens are cached.
  EXPECT_GT(pc["hit_rate"].get<double>(), 0.5);
  EXPECT_EQ(pc["evicted_blocks"], 0) << "the cache holds every conversation";
  EXPECT_EQ(on["metrics"]["requests"], off["metrics"]["requests"]);
  EXPECT_LT(on["metrics"]["ttft_s"]["mean"].get<double>(), 0.6 * off["metrics"]["ttft_s"]["mean"].get<double>());
  EXPECT_NEAR(on["metrics"]["tpot_s"]["mean"].get<double>(), off["metrics"]["tpot_s"]["mean"].get<double>(),
              0.02 * off["metrics"]["tpot_s"]["mean"].get<double>())
      << "decoding reads the same KV";
}

TEST_F(PrefixCacheCliTest, ASharedSystemPromptIsCachedOnceAndUsersThinkBetweenTurns) {
  const std::vector<std::string> common{"-m",    "tiny-dense",
                                        "-p",    "jalapeno",
                                        "--set", "scenario.multi_turn.turns=3",
                                        "--set", "scenario.serving.prefix_caching=true"};
  // The same first prompts of 2304 tokens: each conversation's own, or 2048 shared + 256 own.
  const Json own = serve("own", join(common, smallLoad(4, 16, 2304, 32)));
  const auto load =
      join(join(common, smallLoad(4, 16, 256, 32)), {"--set", "scenario.multi_turn.shared_prefix_tokens=2048"});
  const Json shared = serve("shared", load);
  const Json thinking = serve("thinking", join(load, {"--set", "scenario.multi_turn.think_time=2 ms"}));
  ASSERT_FALSE(own.empty() || shared.empty() || thinking.empty());
  // Every first prompt is 2048 + 256 tokens; all but the first conversation find the 2048 cached.
  EXPECT_GT(shared["prefix_cache"]["hit_rate"].get<double>(), 0.8);
  EXPECT_GT(shared["prefix_cache"]["hit_rate"].get<double>(), own["prefix_cache"]["hit_rate"].get<double>());
  // A user sends a conversation's next turn 2 ms after the previous one's last token.
  const std::string csv = readFile(dir.file("thinking/requests.csv"));
  std::map<int, double> lastFinish;  // by user: the previous request's finish
  std::map<int, int> turn;
  int thoughtAbout = 0;
  std::istringstream rows(csv);
  std::string row;
  std::getline(rows, row);  // header: id,user,replica,measured,arrival_s,first_token_s,finish_s,...
  std::vector<std::vector<std::string>> table;
  while (std::getline(rows, row)) {
    std::vector<std::string> cells;
    std::istringstream line(row);
    for (std::string cell; std::getline(line, cell, ',');) cells.push_back(cell);
    table.push_back(cells);
  }
  for (const auto& cells : table) {
    const int user = std::stoi(cells[1]);
    const double arrival = std::stod(cells[4]);
    if (turn[user] % 3 != 0) {  // a conversation's second or third turn
      EXPECT_NEAR(arrival - lastFinish[user], 2e-3, 1e-9) << "request " << cells[0];
      ++thoughtAbout;
    }
    ++turn[user];
    lastFinish[user] = cells[6].empty() ? 0.0 : std::stod(cells[6]);
  }
  EXPECT_GT(thoughtAbout, 4);
}

TEST_F(PrefixCacheCliTest, OffloadingToTheHostKeepsWhatEvictionWouldDropAndBringsItBackForTheNextTurn) {
  // Four users thinking 1 ms between 4-turn conversations of 512 + 64 tokens, on a cache of 385
  // blocks of 16 tokens (HBM left after an activation reserve): the conversations do not all fit,
  // so cached turns are evicted while their users think.
  const auto load = join({"-m", "tiny-dense", "-p", "jalapeno", "--set", "scenario.multi_turn.turns=4", "--set",
                          "scenario.multi_turn.think_time=1 ms", "--set", "scenario.serving.prefix_caching=true",
                          "--set", "platform.placement.activation_memory=215722 MB"},
                         smallLoad(4, 16, 512, 64));
  const Json dropped = serve("dropped", load);
  const Json kept = serve("kept", join(load, {"--set", "scenario.serving.prefix_cache_offload=host"}));
  ASSERT_FALSE(dropped.empty() || kept.empty());
  const Json& d = dropped["prefix_cache"];
  const Json& k = kept["prefix_cache"];
  ASSERT_GT(d["evicted_blocks"].get<int>(), 0) << "the cache is too small for every conversation";
  EXPECT_EQ(d["offload"], "none");
  EXPECT_EQ(d["offloaded_blocks"], 0);
  EXPECT_FALSE(d["tiers"].contains("host"));
  EXPECT_EQ(k["offload"], "host");
  EXPECT_EQ(k["evicted_blocks"], 0) << "the host holds every block the chip let go";
  EXPECT_GT(k["offloaded_blocks"].get<int>(), 0);
  EXPECT_GT(k["restored_blocks"].get<int>(), 0) << "a later turn found its blocks on the host";
  EXPECT_GT(k["hit_rate"].get<double>(), d["hit_rate"].get<double>() + 0.05);
  // A block is 16 tokens x 4 layers x 2 (K, V) x 2 KV heads x 128 x 2 bytes = 64 KiB on the one chip.
  EXPECT_DOUBLE_EQ(k["offloaded_bytes"].get<double>(), k["offloaded_blocks"].get<double>() * 65536);
  EXPECT_DOUBLE_EQ(k["restored_bytes"].get<double>(), k["restored_blocks"].get<double>() * 65536);
  EXPECT_DOUBLE_EQ(k["host_link_kv_bytes"].get<double>(),
                   k["offloaded_bytes"].get<double>() + k["restored_bytes"].get<double>());
  EXPECT_EQ(k["tiers"]["local_hbm"]["capacity_blocks"], 385);
  EXPECT_EQ(k["tiers"]["local_hbm"]["peak_used_blocks"], 385);
  EXPECT_GT(k["tiers"]["host"]["peak_used_blocks"].get<int>(), 0);
  EXPECT_LE(k["tiers"]["host"]["mean_used_blocks"].get<double>(), k["tiers"]["host"]["peak_used_blocks"].get<double>());
  EXPECT_GT(kept["kv_swap"]["time_s"].get<double>(), 0.0) << "the copies take time on the host link";
  EXPECT_EQ(kept["kv_swap"]["swap_outs"], 0) << "no request was preempted";
  // TTFT per turn: every turn has its four measured requests' row.
  ASSERT_EQ(kept["metrics"]["ttft_by_turn_s"].size(), 4u);
  EXPECT_EQ(kept["metrics"]["ttft_by_turn_s"][0]["turn"], 1);
  EXPECT_GT(kept["metrics"]["ttft_by_turn_s"][3]["mean_input_tokens"].get<double>(),
            kept["metrics"]["ttft_by_turn_s"][0]["mean_input_tokens"].get<double>() + 3 * 400)
      << "the last turn holds the three before it";
}

TEST_F(PrefixCacheCliTest, WithKvSpilledToANeighbourTheCacheHoldsAndEvictsBlocksOnBothTiers) {
  // jalapeno-8 with 104 blocks of HBM per chip for the cache and as many lent by its neighbour.
  const Json j =
      serve("remote", join({"-m", "tiny-dense", "-p", "jalapeno-8", "--set", "scenario.multi_turn.turns=4", "--set",
                            "scenario.multi_turn.think_time=1 ms", "--set", "scenario.serving.prefix_caching=true",
                            "--set", "scenario.serving.kv_cache_placement=spill_to_remote", "--set",
                            "platform.placement.activation_memory=215960 MB"},
                           smallLoad(4, 16, 512, 64)));
  ASSERT_FALSE(j.empty());
  const Json& tiers = j["prefix_cache"]["tiers"];
  EXPECT_EQ(tiers["local_hbm"]["capacity_blocks"], 104);
  EXPECT_EQ(tiers["remote_hbm"]["capacity_blocks"], 104);
  EXPECT_EQ(tiers["remote_hbm"]["peak_used_blocks"], 104) << "the conversations fill the lent HBM too";
  EXPECT_GT(tiers["remote_hbm"]["cached_blocks_at_end"].get<int>(), 0);
  EXPECT_GT(j["prefix_cache"]["evicted_blocks"].get<int>(), 0);
  EXPECT_GT(j["prefix_cache"]["hit_rate"].get<double>(), 0.0);
  EXPECT_GT(j["kv_placement"]["cross_chip_kv_bytes"].get<double>(), 0.0) << "cached blocks are read where they are";
  EXPECT_FALSE(tiers.contains("host"));
}

TEST_F(PrefixCacheCliTest, WhatIsNotModelledIsRefusedNamingTheKey) {
  std::vector<std::string> args{
      "run",      "-q",           "-s",       "inferencex-8k1k", "-m",
      "tiny-moe", "-p",           "jalapeno", "--set",           "scenario.serving.prefix_caching=true",
      "--out",    dir.file("bad")};
  const auto small = smallLoad(1, 1, 64, 8);
  args.insert(args.end(), small.begin(), small.end());
  const ProcessResult r = runScoville(args);
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("scenario.serving.prefix_caching"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sliding-window"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad/report.json")));
  // Conversations (a shared system prompt, think time) need users: an open loop is refused.
  const std::string openLoop =
      scenarioFile("open.yaml",
                   "name: t\ndescription: t\nkind: serving\nload: {impl: poisson, rate_per_s: 10}\ninput_tokens: 64\n"
                   "output_tokens: 8\nrequests: 1\nmulti_turn: {think_time: 1 s}\n");
  const ProcessResult open =
      runScoville({"run", "-q", "-s", openLoop, "-m", "tiny-dense", "-p", "jalapeno", "--out", dir.file("bad")});
  EXPECT_EQ(open.exitCode, 2) << open.err;
  EXPECT_NE(open.err.find("multi_turn"), std::string::npos) << open.err;
  // Offloading a cache that is off, and to the host from a cache that spills to a neighbour.
  const auto tiny = join({"run", "-q", "-m", "tiny-dense", "-p", "jalapeno-8", "--out", dir.file("bad")},
                         join({"-s", "agent-multiturn"}, small));
  const ProcessResult noCache = runScoville(join(tiny, {"--set", "scenario.serving.prefix_cache_offload=host"}));
  EXPECT_EQ(noCache.exitCode, 2) << noCache.err;
  EXPECT_NE(noCache.err.find("prefix_cache_offload"), std::string::npos) << noCache.err;
  EXPECT_NE(noCache.err.find("prefix_caching: true"), std::string::npos) << noCache.err;
  const ProcessResult spill = runScoville(join(
      tiny, {"--set", "scenario.serving.prefix_caching=true", "--set", "scenario.serving.prefix_cache_offload=host",
             "--set", "scenario.serving.kv_cache_placement=spill_to_remote"}));
  EXPECT_EQ(spill.exitCode, 2) << spill.err;
  EXPECT_NE(spill.err.find("scenario.serving.prefix_cache_offload"), std::string::npos) << spill.err;
  EXPECT_NE(spill.err.find("spill_to_remote"), std::string::npos) << spill.err;
  // Ordering the queue by cached tokens without a cache.
  const ProcessResult lpm = runScoville(join(tiny, {"--set", "scenario.scheduler.queue_policy=longest_prefix"}));
  EXPECT_EQ(lpm.exitCode, 2) << lpm.err;
  EXPECT_NE(lpm.err.find("scenario.scheduler.queue_policy"), std::string::npos) << lpm.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad/report.json")));
}

}  // namespace
}  // namespace scoville::test
