// The serving run's KV placement modes (runtime/KvPlacementMode.h): every placement policy the
// KV cache knows has a row, each row's tiers, and an unknown name refused with the known ones.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "hw/kv/KvPlacementPolicy.h"
#include "runtime/KvPlacementMode.h"

namespace scoville::runtime {
namespace {

TEST(KvPlacementMode, HasARowForEveryPlacementPolicy) {
  EXPECT_EQ(KvPlacementMode::names(), hw::kvPlacementPolicyNames());
  for (const std::string& name : hw::kvPlacementPolicyNames()) EXPECT_EQ(KvPlacementMode::of(name).policy, name);
}

TEST(KvPlacementMode, RecognisesEachPolicysTiers) {
  const KvPlacementMode& local = KvPlacementMode::of("local_first");
  EXPECT_FALSE(local.remoteTier);
  EXPECT_FALSE(local.hostTier);
  EXPECT_FALSE(local.offChip());
  const KvPlacementMode& spill = KvPlacementMode::of("spill_to_remote");
  EXPECT_TRUE(spill.remoteTier);
  EXPECT_FALSE(spill.hostTier);
  EXPECT_TRUE(spill.offChip());
  const KvPlacementMode& offload = KvPlacementMode::of("offload_to_host");
  EXPECT_FALSE(offload.remoteTier);
  EXPECT_TRUE(offload.hostTier);
  EXPECT_TRUE(offload.offChip());
}

TEST(KvPlacementMode, RejectsAnUnknownNameListingTheKnownOnes) {
  try {
    KvPlacementMode::of("everywhere");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'everywhere'"), std::string::npos) << message;
    EXPECT_NE(message.find("local_first, spill_to_remote, offload_to_host"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace scoville::runtime
