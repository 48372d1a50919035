// Prefix caching end to end: multi-turn conversations whose earlier turns stay cached prefill only
// their new tokens (time to first token falls, decoding does not change), the hit rate is the
// cached share of the prompts, and what is not modelled is refused naming the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
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
}

}  // namespace
}  // namespace scoville::test
