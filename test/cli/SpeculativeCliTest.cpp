// Speculative decoding end to end, through the scoville executable: draft_tokens 0 is plain
// decoding to the last digit, an acceptance length of 1 produces plain decoding's tokens per step,
// drafts all accepted give k + 1 tokens per step, MTP on a DeepSeek-style model and a separate
// draft model run with their weights placed and their passes timed, and bad input is refused
// naming the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class SpeculativeCliTest : public ServingCliFixture {
 protected:
  /// --set options for `method` with k draft tokens and an acceptance given as `acceptance` sets.
  static std::vector<std::string> speculate(const std::string& method, int k, std::vector<std::string> acceptance) {
    std::vector<std::string> out{"--set", "scenario.speculative.method=" + method, "--set",
                                 "scenario.speculative.draft_tokens=" + std::to_string(k)};
    for (const std::string& a : acceptance) {
      out.push_back("--set");
      out.push_back("scenario.speculative.acceptance." + a);
    }
    return out;
  }

  static uint64_t steps(const Json& r) {
    uint64_t total = 0;
    for (const Json& replica : r["replicas"]) total += replica["steps"].get<uint64_t>();
    return total;
  }
};

TEST_F(SpeculativeCliTest, NoDraftTokensIsPlainDecodingExactly) {
  const auto load = join({"-m", "tiny-dense", "--seed", "5"}, smallLoad(4, 8, 256, 24));
  const Json plain = serve("plain", load);
  const Json zero = serve("zero", join(load, speculate("eagle", 0, {"impl=mean_length", "mean_length=1"})));
  ASSERT_FALSE(plain.empty() || zero.empty());
  EXPECT_EQ(zero["metrics"], plain["metrics"]);
  EXPECT_EQ(zero["replicas"], plain["replicas"]);
  EXPECT_EQ(zero["chips"], plain["chips"]) << "no draft is placed";
  EXPECT_FALSE(plain.contains("speculative_decoding"));
  EXPECT_EQ(zero["speculative_decoding"]["num_drafts"], 0);
  EXPECT_EQ(zero["speculative_decoding"]["mean_acceptance_length"], 1.0);
}

TEST_F(SpeculativeCliTest, AnAcceptanceLengthOfOneProducesPlainDecodingsTokensStepForStep) {
  // One user: each request runs alone, its prompt then one step per output token but the first.
  const auto load = join({"-m", "tiny-dense"}, smallLoad(1, 3, 256, 17));
  const Json plain = serve("plain", load);
  const Json none = serve("none", join(load, speculate("eagle", 3, {"impl=mean_length", "mean_length=1"})));
  ASSERT_FALSE(plain.empty() || none.empty());
  const Json& s = none["speculative_decoding"];
  EXPECT_EQ(s["num_accepted_tokens"], 0);
  EXPECT_EQ(s["mean_acceptance_length"], 1.0);
  EXPECT_GT(s["num_draft_tokens"].get<uint64_t>(), 0u);
  EXPECT_EQ(steps(none), steps(plain)) << "one token per step, as without drafts";
  EXPECT_EQ(none["load"]["sent_requests"], plain["load"]["sent_requests"]);
  // The drafts are proposed and verified for nothing: every step costs more.
  EXPECT_GT(none["metrics"]["tpot_s"]["mean"].get<double>(), plain["metrics"]["tpot_s"]["mean"].get<double>());
  EXPECT_GT(s["draft_time_share"].get<double>(), 0.0);
  EXPECT_LT(s["draft_time_share"].get<double>(), 1.0);
}

TEST_F(SpeculativeCliTest, DraftsAllAcceptedGiveDraftsPlusOneTokensPerStep) {
  const auto load = join({"-m", "tiny-dense"}, smallLoad(1, 3, 256, 33));
  const Json plain = serve("plain", load);
  const Json all = serve("all", join(load, speculate("eagle", 3, {"impl=per_position", "rates=[1, 1, 1]"})));
  ASSERT_FALSE(plain.empty() || all.empty());
  const Json& s = all["speculative_decoding"];
  EXPECT_EQ(s["mean_acceptance_length"], 4.0);
  EXPECT_EQ(s["draft_acceptance_rate"], 1.0);
  EXPECT_EQ(s["num_accepted_tokens"], s["num_draft_tokens"]);
  // Per request: the prompt's step, then 32 tokens in 8 steps of 3 drafts + 1 (the last one
  // verifies 3: 4 tokens were left).
  const auto requests = all["load"]["sent_requests"].get<uint64_t>();
  EXPECT_EQ(requests, plain["load"]["sent_requests"].get<uint64_t>());
  EXPECT_EQ(steps(all), requests * 9);
  EXPECT_EQ(steps(plain), requests * 33);
  EXPECT_EQ(s["num_drafts"].get<uint64_t>(), requests * 8);
  EXPECT_LT(all["metrics"]["tpot_s"]["mean"].get<double>(), plain["metrics"]["tpot_s"]["mean"].get<double>());
}

TEST_F(SpeculativeCliTest, MtpOnAnMlaMixtureOfExpertsPlacesItsModuleAndIsDeterministic) {
  const auto args =
      join(join({"-m", "tiny-mla", "--seed", "9", "--set", "model.mtp_layers=1"}, smallLoad(4, 8, 256, 48)),
           speculate("mtp", 3, {"impl=mean_length", "mean_length=2.5"}));
  const Json a = serve("a", args);
  const Json b = serve("b", args);
  const Json plain = serve("plain", join({"-m", "tiny-mla", "--seed", "9"}, smallLoad(4, 8, 256, 48)));
  ASSERT_FALSE(a.empty() || b.empty() || plain.empty());
  EXPECT_EQ(a, b) << "the same seed gives the same acceptance and the same run";
  const Json& s = a["speculative_decoding"];
  EXPECT_EQ(s["method"], "mtp");
  EXPECT_NEAR(s["configured_mean_acceptance_length"].get<double>(), 2.5, 1e-9);
  EXPECT_NEAR(s["mean_acceptance_length"].get<double>(), 2.5, 0.25);
  EXPECT_GT(a["chips"][0]["weight_bytes"].get<double>(), plain["chips"][0]["weight_bytes"].get<double>())
      << "the MTP module's weights are placed";
  EXPECT_LT(a["kv_cache_capacity_tokens_per_replica"].get<uint64_t>(),
            plain["kv_cache_capacity_tokens_per_replica"].get<uint64_t>())
      << "its KV takes a layer's room in every block";
  EXPECT_GT(a["replicas"][0]["per_op"].count("draft.experts"), 0u) << "the module's experts run as draft ops";
}

TEST_F(SpeculativeCliTest, MirroredRanksGiveExactlyTheSimulatedResultsWithTheDraft) {
  // tiny-moe's target and its MTP module split evenly over jalapeno-8's eight ranks: ranks 1-7
  // mirror rank 0, draft passes included, and the results must not tell it from every chip simulated.
  const auto args =
      join(join({"-m", "tiny-moe", "-p", "jalapeno-8", "--set", "model.mtp_layers=1"}, smallLoad(4, 4, 512, 24)),
           speculate("mtp", 2, {"impl=mean_length", "mean_length=2"}));
  const Json mirrored = serve("mirrored", args);
  const Json exact = serve("exact", join(args, {"--exact-all-chips"}));
  ASSERT_FALSE(mirrored.empty() || exact.empty());
  EXPECT_EQ(mirrored["mirrored_chips"], 7);
  EXPECT_EQ(exact["mirrored_chips"], 0);
  EXPECT_EQ(mirrored["metrics"], exact["metrics"]);
  EXPECT_EQ(mirrored["speculative_decoding"], exact["speculative_decoding"]);
}

TEST_F(SpeculativeCliTest, ASeparateDraftModelRunsBesideTheTarget) {
  const Json r = serve("draft", join(join({"-m", "tiny-dense"}, smallLoad(2, 4, 256, 24)),
                                     join(speculate("draft_model", 2, {"impl=per_position", "rates=[0.7, 0.5]"}),
                                          {"--set", "scenario.speculative.draft_model=tiny-mla"})));
  ASSERT_FALSE(r.empty());
  const Json& s = r["speculative_decoding"];
  EXPECT_EQ(s["method"], "draft_model");
  EXPECT_NEAR(s["configured_mean_acceptance_length"].get<double>(), 1.0 + 0.7 + 0.35, 1e-12);
  EXPECT_GT(s["num_accepted_tokens"].get<uint64_t>(), 0u);
  EXPECT_GT(r["replicas"][0]["per_op"].count("draft.lm_head"), 0u) << "its own LM head";
}

TEST_F(SpeculativeCliTest, BadSpeculativeInputIsRefusedNamingTheKey) {
  const auto expectError = [&](std::vector<std::string> args, const std::vector<std::string>& mentions) {
    std::vector<std::string> full{"run", "-q", "-s", "inferencex-8k1k", "--out", dir.file("bad")};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult r = runScoville(full);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    for (const std::string& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << m << " not in: " << r.err;
    EXPECT_FALSE(fs::exists(dir.file("bad/report.json")));
  };
  const auto small = smallLoad(1, 1, 64, 8);
  expectError(join(join({"-m", "tiny-dense"}, small), speculate("mtp", 2, {"impl=mean_length", "mean_length=2"})),
              {"model.mtp_layers", "tiny-dense"});
  expectError(join(join({"-m", "tiny-dense"}, small), speculate("eagle", 3, {"impl=per_position", "rates=[0.5]"})),
              {"scenario.speculative.acceptance.rates", "1 rates but draft_tokens is 3"});
  expectError(join(join({"-m", "tiny-dense"}, small), speculate("eagle", 2, {"impl=mean_length", "mean_length=3.5"})),
              {"scenario.speculative.acceptance.mean_length", "out of range"});
  expectError(join(join({"-m", "tiny-dense"}, small), speculate("eagle", 2, {"impl=per_position", "rates=[0.5, 1.5]"})),
              {"scenario.speculative.acceptance.rates"});
  expectError(
      join(join({"-m", "tiny-dense"}, small), speculate("draft_model", 2, {"impl=mean_length", "mean_length=2"})),
      {"scenario.speculative.draft_model", "required"});
  expectError(join(join({"-m", "tiny-dense", "--set", "scenario.speculative.draft_model=no-such-model"}, small),
                   speculate("draft_model", 2, {"impl=mean_length", "mean_length=2"})),
              {"no-such-model"});
  expectError(join(join({"-m", "tiny-mla", "--set", "scenario.speculative.draft_model=tiny-dense"}, small),
                   speculate("draft_model", 2, {"impl=mean_length", "mean_length=2"})),
              {"KV bytes per token", "tiny-dense"});
  expectError(join(join({"-m", "tiny-dense", "--set", "scenario.speculative.draft_tokenz=2"}, small),
                   speculate("eagle", 2, {"impl=mean_length", "mean_length=2"})),
              {"draft_tokenz", "did you mean 'draft_tokens'"});
  writeFile(dir.file("accepted.csv"), "accepted\n1\n7\n");
  const std::string trace =
      scenarioFile("spec.yaml",
                   "name: t\ndescription: t\nkind: serving\ninput_tokens: 64\noutput_tokens: 8\nrequests: 1\n"
                   "speculative: {method: eagle, draft_tokens: 2, acceptance: {impl: trace, file: accepted.csv}}\n");
  const ProcessResult r = runScoville({"run", "-q", "-m", "tiny-dense", "-s", trace, "--out", dir.file("bad")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("accepted.csv:3"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace scoville::test
