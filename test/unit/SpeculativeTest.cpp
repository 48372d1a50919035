// Speculative decoding's pure parts: the acceptance model's closed forms and draws, the draft
// passes of a step, the draft's model, the scheduler's verification and KV rollback, and the
// planner's verification of several positions.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>

#include "config/ConfigError.h"
#include "test/support/ConfigErrors.h"
#include "test/unit/ServingSchedulerHarness.h"
#include "test/unit/StepPlannerHelpers.h"
#include "workloads/Speculative.h"

namespace scoville::workload {
namespace {

using schedulertest::cacheOf;
using schedulertest::limits;

AcceptanceConfig meanLength(double length) {
  AcceptanceConfig a;
  a.impl = AcceptanceImpl::kMeanLength;
  a.meanLength = length;
  return a;
}

AcceptanceConfig perPosition(std::vector<double> rates) {
  AcceptanceConfig a;
  a.impl = AcceptanceImpl::kPerPosition;
  a.rates = std::move(rates);
  return a;
}

TEST(AcceptanceModel, AConstantRateGivesTheMeanLengthInClosedForm) {
  EXPECT_NEAR(AcceptanceModel::rateForMeanLength(1.5, 1), 0.5, 1e-9);
  // 1 + p + p^2 = 1.96 at p = 0.6.
  EXPECT_NEAR(AcceptanceModel::rateForMeanLength(1.96, 2), 0.6, 1e-9);
  EXPECT_EQ(AcceptanceModel::rateForMeanLength(1.0, 3), 0.0);
  EXPECT_EQ(AcceptanceModel::rateForMeanLength(4.0, 3), 1.0);
  EXPECT_NEAR(AcceptanceModel(meanLength(2.82), 3, 1).meanLength(), 2.82, 1e-9);
  // Per position: 1 + 0.8 + 0.8 x 0.5 + 0.8 x 0.5 x 0.25.
  EXPECT_NEAR(AcceptanceModel(perPosition({0.8, 0.5, 0.25}), 3, 1).meanLength(), 2.3, 1e-12);
}

TEST(AcceptanceModel, DrawsStopAtTheFirstRejectionAndAverageToTheMeanLength) {
  AcceptanceModel all(perPosition({1.0, 1.0, 1.0}), 3, 7);
  AcceptanceModel none(meanLength(1.0), 3, 7);
  AcceptanceModel first(perPosition({1.0, 0.0, 1.0}), 3, 7);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(all.draw(3), 3);
    EXPECT_EQ(all.draw(2), 2) << "a verification of fewer drafts accepts at most those";
    EXPECT_EQ(none.draw(3), 0);
    EXPECT_EQ(first.draw(3), 1) << "a rejection ends the run, whatever follows";
  }
  AcceptanceModel model(meanLength(2.82), 3, 11), again(meanLength(2.82), 3, 11);
  double sum = 0.0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const int a = model.draw(3);
    ASSERT_EQ(a, again.draw(3)) << "the same seed draws the same counts";
    sum += a;
  }
  EXPECT_NEAR(1.0 + sum / n, 2.82, 0.01);
}

TEST(AcceptanceModel, ATraceReplaysItsCountsInOrderClampedToTheDrafts) {
  AcceptanceConfig a;
  a.impl = AcceptanceImpl::kTrace;
  AcceptanceModel model(a, 3, 0, {3, 0, 2});
  EXPECT_EQ(model.draw(3), 3);
  EXPECT_EQ(model.draw(3), 0);
  EXPECT_EQ(model.draw(1), 1);
  EXPECT_EQ(model.draw(3), 3) << "and from the start again";
  EXPECT_NEAR(model.meanLength(), 1.0 + 5.0 / 3.0, 1e-12);
}

TEST(AcceptanceModel, BadConfigurationsAreRefused) {
  EXPECT_THROW(AcceptanceModel(perPosition({0.5}), 2, 0), std::invalid_argument);
  EXPECT_THROW(AcceptanceModel(perPosition({0.5, 1.5}), 2, 0), std::invalid_argument);
  EXPECT_THROW(AcceptanceModel(meanLength(3.5), 2, 0), std::invalid_argument);
  AcceptanceConfig trace;
  trace.impl = AcceptanceImpl::kTrace;
  EXPECT_THROW(AcceptanceModel(trace, 2, 0), std::invalid_argument);
}

TEST(AcceptanceModel, TheTraceFileIsCheckedRowByRow) {
  const std::string path = ::testing::TempDir() + "/acceptance.csv";
  std::ofstream(path) << "accepted\n1\n3\n0\n";
  EXPECT_EQ(readAcceptanceTrace(path, 3), (std::vector<int>{1, 3, 0}));
  std::ofstream(path) << "accepted\n1\n4\n";
  const std::optional<config::ConfigError> e =
      test::configErrorOf([&] { readAcceptanceTrace(path, 3); }, "a count above draft_tokens");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->location(), path + ":3");
  EXPECT_NE(e->message().find("[0, draft_tokens = 3]"), std::string::npos) << e->message();
  std::ofstream(path) << "count\n1\n";
  EXPECT_THROW(readAcceptanceTrace(path, 3), config::ConfigError);
  EXPECT_THROW(readAcceptanceTrace(path + ".missing", 3), config::ConfigError);
}

TEST(DraftPasses, TheFirstFeedsWhatWasAcceptedAndTheRestOneTokenEach) {
  StepBatch step;
  step.kvLayerStride = 4096;
  step.kvLayerRegions = 2;
  // A verification of 3 drafts, 1 accepted, proposing 3 again; one of 2 drafts on its last
  // tokens (proposes nothing); a prompt's middle chunk; its last chunk, proposing 2.
  StepSequence verify{1, 100, 4, true, 0};
  verify.verify = 3;
  verify.accepted = 1;
  verify.propose = 3;
  StepSequence last{2, 50, 3, true, 1024};
  last.verify = 2;
  last.accepted = 2;
  StepSequence chunk{3, 0, 64, false, 2048};
  StepSequence prompt{4, 64, 32, true, 3072};
  prompt.propose = 2;
  step.sequences = {verify, last, chunk, prompt};

  const std::vector<StepBatch> passes = draftPasses(step);
  ASSERT_EQ(passes.size(), 3u) << "as many passes as the most drafts proposed";
  const auto& p1 = passes[0].sequences;
  ASSERT_EQ(p1.size(), 3u) << "a sequence that proposes nothing and prefills nothing has no draft work";
  EXPECT_EQ(p1[0].request, 1u);
  EXPECT_EQ(p1[0].context, 100u);
  EXPECT_EQ(p1[0].tokens, 2u) << "its token and the one draft accepted";
  EXPECT_TRUE(p1[0].samples);
  EXPECT_EQ(p1[1].request, 3u);
  EXPECT_EQ(p1[1].tokens, 64u) << "a chunk builds the draft's KV of the chunk";
  EXPECT_FALSE(p1[1].samples);
  EXPECT_EQ(p1[2].tokens, 32u);
  EXPECT_TRUE(p1[2].samples);
  for (const StepSequence& q : p1) EXPECT_EQ(q.verify + q.accepted + q.propose, 0u);
  ASSERT_EQ(passes[1].sequences.size(), 2u);
  EXPECT_EQ(passes[1].sequences[0].context, 102u);
  EXPECT_EQ(passes[1].sequences[1].context, 96u);
  EXPECT_EQ(passes[1].sequences[1].tokens, 1u);
  ASSERT_EQ(passes[2].sequences.size(), 1u);
  EXPECT_EQ(passes[2].sequences[0].request, 1u);
  EXPECT_EQ(passes[2].sequences[0].context, 103u);
  EXPECT_EQ(passes[2].kvLayerStride, 4096u);
  EXPECT_EQ(passes[2].kvLayerRegions, 2u);
}

ModelConfig tinyMoe() {
  return test::shippedModel("tiny-moe");
}

TEST(DraftModel, MtpAndEagleDeriveOneLayerFromTheTargetAndADraftModelMustShareItsVocabulary) {
  ModelConfig target = tinyMoe();
  SpeculativeConfig spec;
  spec.method = SpeculativeMethod::kMtp;
  spec.draftTokens = 3;
  EXPECT_THROW(draftModelFor(target, spec, nullptr), config::ConfigError) << "no MTP module";
  target.mtpLayers = 1;
  const DraftModel mtp = draftModelFor(target, spec, nullptr);
  EXPECT_EQ(mtp.model.layers, 1);
  EXPECT_TRUE(mtp.model.isMoeLayer(0)) << "DeepSeek's MTP module is a MoE layer";
  EXPECT_TRUE(mtp.layout.sharesEmbedding && mtp.layout.sharesLmHead);
  EXPECT_EQ(mtp.layout.inputProjection, 2u * static_cast<uint64_t>(target.hidden));

  spec.method = SpeculativeMethod::kEagle;
  target.ffnIntermediate = 0;
  EXPECT_THROW(draftModelFor(target, spec, nullptr), config::ConfigError) << "no FFN width to take";
  spec.head.ffnIntermediate = 2048;
  spec.head.vocab = 8000;
  const DraftModel eagle = draftModelFor(target, spec, nullptr);
  EXPECT_EQ(eagle.model.family, ModelFamily::kDense);
  EXPECT_EQ(eagle.model.ffnIntermediate, 2048);
  EXPECT_EQ(eagle.model.vocab, 8000);
  EXPECT_FALSE(eagle.layout.sharesLmHead) << "a head with its own vocabulary has its own LM head";

  spec.method = SpeculativeMethod::kDraftModel;
  ModelConfig draft = test::shippedModel("tiny-dense");
  draft.vocab = target.vocab + 1;
  EXPECT_THROW(draftModelFor(target, spec, &draft), config::ConfigError);
  draft.vocab = target.vocab;
  EXPECT_FALSE(draftModelFor(target, spec, &draft).layout.sharesEmbedding);
}

/// Drives one request of `input` + `output` tokens alone to its end; returns the tokens each step produced.
std::vector<uint32_t> produced(ServingScheduler& s, uint64_t input, uint64_t output) {
  s.submit(ServingRequest{1, input, output});
  std::vector<uint32_t> tokens;
  uint64_t generated = 0;
  while (s.busy()) {
    const StepBatch b = s.next();
    EXPECT_EQ(b.sequences.size(), 1u);
    const StepSequence& q = b.sequences.front();
    // The KV holds the prompt and every generated token but the last, and grows by what it feeds.
    EXPECT_EQ(s.kv().tokens(1), q.context + q.tokens);
    const std::vector<StepOutcome> out = s.complete();
    tokens.push_back(out.front().tokens);
    generated += out.front().tokens;
    if (!out.front().finished) {
      EXPECT_EQ(s.kv().tokens(1), input + generated - 1) << "rejected drafts rolled back";
    }
  }
  EXPECT_EQ(generated, output);
  return tokens;
}

TEST(SpeculativeScheduler, AllDraftsAcceptedGiveDraftsPlusOneTokensPerStep) {
  ServingScheduler s(limits(8, 4096, 4096), cacheOf(64));
  s.speculate(3, std::make_unique<AcceptanceModel>(perPosition({1.0, 1.0, 1.0}), 3, 0), 0);
  // The prompt's step samples 1; then 4, 4; the last step verifies none (one token was left).
  EXPECT_EQ(produced(s, 40, 10), (std::vector<uint32_t>{1, 4, 4, 1}));
  EXPECT_EQ(s.speculation().drafts, 2u);
  EXPECT_EQ(s.speculation().draftTokens, 6u);
  EXPECT_EQ(s.speculation().acceptedTokens, 6u);
  EXPECT_EQ(s.speculation().acceptedPerPosition, (std::vector<uint64_t>{2, 2, 2}));
}

TEST(SpeculativeScheduler, DraftsNeverPassTheLastTokenAndNoneAcceptedIsPlainDecoding) {
  ServingScheduler s(limits(8, 4096, 4096), cacheOf(64));
  s.speculate(3, std::make_unique<AcceptanceModel>(perPosition({1.0, 1.0, 1.0}), 3, 0), 0);
  EXPECT_EQ(produced(s, 40, 4), (std::vector<uint32_t>{1, 3})) << "3 left: verify 2, accept both, plus one";

  ServingScheduler plain(limits(8, 4096, 4096), cacheOf(64));
  ServingScheduler none(limits(8, 4096, 4096), cacheOf(64));
  none.speculate(3, std::make_unique<AcceptanceModel>(meanLength(1.0), 3, 0), 0);
  EXPECT_EQ(produced(none, 40, 12), produced(plain, 40, 12)) << "one token per step, as plain decoding";
  EXPECT_EQ(none.speculation().acceptedTokens, 0u);
  EXPECT_EQ(none.speculation().draftTokens, 3u * 8 + 2 + 1) << "3 drafts while 4 or more tokens are left";
}

TEST(SpeculativeScheduler, AVerificationCountsAllItsTokensAgainstTheStepBudget) {
  // 6 tokens a step: the first decode takes 1 + 3, the second only 1 + 1.
  ServingScheduler s(limits(8, 6, 64), cacheOf(64));
  s.speculate(3, std::make_unique<AcceptanceModel>(perPosition({1.0, 1.0, 1.0}), 3, 0), 0);
  s.submit(ServingRequest{1, 3, 20});
  s.submit(ServingRequest{2, 3, 20});
  s.next();  // both prompts (3 + 3 tokens)
  s.complete();
  const StepBatch b = s.next();
  ASSERT_EQ(b.sequences.size(), 2u);
  EXPECT_EQ(b.sequences[0].verify, 3u);
  EXPECT_EQ(b.sequences[1].verify, 1u);
  EXPECT_EQ(b.tokens(), 6u);
}

TEST(KvRollback, DropsTheRejectedTokensBlocksAndRefusesToGrow) {
  auto kv = cacheOf(16);
  ASSERT_TRUE(kv->admit(1, 30).ok);
  ASSERT_TRUE(kv->append(1, 4).ok);  // 34 tokens: 3 blocks of 16
  EXPECT_EQ(kv->blocks(1).size(), 3u);
  kv->rollback(1, 32);
  EXPECT_EQ(kv->tokens(1), 32u);
  EXPECT_EQ(kv->blocks(1).size(), 2u) << "the block only the rejected tokens used is freed";
  EXPECT_EQ(kv->usedBlocks(hw::KvTier::kLocalHbm), 2u);
  EXPECT_THROW(kv->rollback(1, 33), std::invalid_argument);
  EXPECT_THROW(kv->rollback(2, 0), std::invalid_argument);
}

TEST(StepPlannerVerify, AVerificationAttendsCausallyAndSamplesEveryPosition) {
  const ModelConfig model = test::shippedModel("tiny-dense");
  const StepPlanner planner(model, planner_test::jalapeno(), ModelShard{});
  StepBatch plain;
  plain.sequences = {StepSequence{1, 1000, 1, true, 0}};
  StepBatch verify;
  StepSequence q{1, 1000, 4, true, 0};
  q.verify = 3;
  verify.sequences = {q};
  const StepPlan a = planner.plan(plain);
  const StepPlan b = planner.plan(verify);
  const auto head = [](const StepPlan& p) {
    for (const PlannedOp& op : p.ops) {
      if (op.name == "lm_head") return op.gemms.front().m;
    }
    return uint64_t{0};
  };
  EXPECT_EQ(head(a), 1u);
  EXPECT_EQ(head(b), 4u) << "the target samples each verified position";
  // The same cached KV is read once; four tokens' KV appended instead of one.
  const auto kv = [](const StepPlan& p, tlm::OpKind kind) {
    uint64_t bytes = 0;
    for (const PlannedOp& op : p.ops) {
      for (const MemoryAccess& m : op.accesses) bytes += m.kind == kind ? m.bytes : 0;
    }
    return bytes;
  };
  EXPECT_EQ(kv(a, tlm::OpKind::kKvRead), kv(b, tlm::OpKind::kKvRead));
  EXPECT_EQ(kv(b, tlm::OpKind::kKvAppend), 4 * kv(a, tlm::OpKind::kKvAppend));
  // Attention: four queries per KV head group, each over its causal span (1001..1004 tokens).
  uint64_t scores = 0;
  for (const PlannedOp& op : b.ops) {
    if (op.name != "attention") continue;
    for (const tlm::GemmShape& g : op.gemms) {
      if (g.k == static_cast<uint64_t>(model.headDim)) scores += g.m * g.n;
    }
  }
  const uint64_t group = static_cast<uint64_t>(model.qHeads / model.kvHeads);
  EXPECT_EQ(scores, 4 * group * 1003 * static_cast<uint64_t>(model.layers)) << "ceil((1001 + ... + 1004) / 4) each";
  EXPECT_GT(b.flops, a.flops);
}

}  // namespace
}  // namespace scoville::workload
