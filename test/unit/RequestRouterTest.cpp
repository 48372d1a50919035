// The serving front end's decisions: entry replicas, the decode hand-off, the records, the
// measurement window and completion. Pure logic, no SystemC.
#include <gtest/gtest.h>
#include <stdexcept>
#include <vector>

#include "workloads/ReplicaClasses.h"
#include "workloads/RequestRouter.h"

namespace scoville::workload {
namespace {

Arrival arrival(uint64_t id, int user, uint64_t input = 10, uint64_t output = 3) {
  Arrival a;
  a.id = id;
  a.user = user;
  a.inputTokens = input;
  a.outputTokens = output;
  return a;
}

TEST(RequestRouter, AUserStaysOnItsReplicaAndOpenLoopRequestsGoRoundRobin) {
  RequestRouter router({0, 2, 5}, {}, 0, 100);
  // Users 0..5 over three entry replicas: user modulo 3, every time they send.
  for (int round = 0; round < 2; ++round) {
    for (int u = 0; u < 6; ++u) {
      EXPECT_EQ(router.admit(arrival(router.records().size() + 1, u), 0.0), std::vector<int>({0, 2, 5})[u % 3]);
    }
  }
  // Open loop (user -1): 0, 2, 5, 0, ... regardless of the users before.
  std::vector<int> got;
  for (int i = 0; i < 4; ++i) got.push_back(router.admit(arrival(router.records().size() + 1, -1), 0.0));
  EXPECT_EQ(got, (std::vector<int>{0, 2, 5, 0}));
  EXPECT_EQ(router.records().back().replica, 0);
}

TEST(RequestRouter, PrefilledRequestsGoRoundRobinOverTheDecodePool) {
  RequestRouter router({0, 1}, {2, 3, 4}, 0, 1);
  std::vector<int> got;
  for (int i = 0; i < 7; ++i) got.push_back(router.nextDecoder());
  EXPECT_EQ(got, (std::vector<int>{2, 3, 4, 2, 3, 4, 2}));
  RequestRouter plain({0}, {}, 0, 1);
  EXPECT_THROW(plain.nextDecoder(), std::logic_error);
  EXPECT_THROW(RequestRouter({}, {}, 0, 1), std::invalid_argument);
}

TEST(RequestRouter, RecordsTokenTimesAndCompletesWithTheLastMeasuredRequest) {
  // Two warm-up requests (ids 1, 2), then three measured (3..5), then one that keeps the load (6).
  RequestRouter router({0}, {}, 2, 3);
  for (uint64_t id = 1; id <= 6; ++id) router.admit(arrival(id, -1), 0.5 * static_cast<double>(id));
  EXPECT_FALSE(router.record(1).measured);
  EXPECT_FALSE(router.record(2).measured);
  EXPECT_TRUE(router.record(3).measured);
  EXPECT_TRUE(router.record(5).measured);
  EXPECT_FALSE(router.record(6).measured);
  EXPECT_DOUBLE_EQ(router.record(4).arrival, 2.0);

  router.tokenProduced(3, 4.0);
  router.tokenProduced(3, 4.5);
  EXPECT_DOUBLE_EQ(router.record(3).firstToken, 4.0);
  EXPECT_EQ(router.record(3).tokenTimes, (std::vector<double>{4.0, 4.5}));

  // Warm-up and unmeasured requests never complete the run.
  for (uint64_t id : {1, 2, 6}) {
    router.tokenProduced(id, 5.0);
    router.finished(id, 5.0, 0);
  }
  EXPECT_FALSE(router.completed());
  router.finished(3, 6.0, 2);
  EXPECT_EQ(router.record(3).preemptions, 2);
  router.tokenProduced(5, 6.5);
  router.finished(5, 7.0, 0);
  EXPECT_FALSE(router.completed());
  router.tokenProduced(4, 6.75);
  router.finished(4, 8.0, 0);
  EXPECT_TRUE(router.completed());
  EXPECT_THROW(router.record(7), std::out_of_range);
}

TEST(RequestRouter, TheWindowSpansTheMeasuredRequestsOnly) {
  RequestRouter router({0}, {}, 1, 2);
  router.admit(arrival(1, -1), 0.0);           // warm-up: outside the window
  EXPECT_DOUBLE_EQ(router.window().end, 0.0);  // not every measured request admitted yet
  router.admit(arrival(2, -1), 3.0);
  router.admit(arrival(3, -1), 2.0);
  router.finished(1, 20.0, 0);
  router.finished(2, 9.0, 0);
  router.finished(3, 7.0, 0);
  const ServingWindow w = router.window();
  EXPECT_DOUBLE_EQ(w.start, 2.0);
  EXPECT_DOUBLE_EQ(w.end, 9.0);
}

TEST(RequestRouter, RequestsSentOutOfIdOrderKeepTheirOwnRecords) {
  // A user thinking before its next turn (id 2) sends it after another user has started a new
  // conversation at once (id 3): the records follow the sends, lookups the ids.
  RequestRouter router({0, 1}, {}, 0, 3);
  router.admit(arrival(1, 0), 0.0);
  router.admit(arrival(3, 1, 30), 1.0);
  EXPECT_THROW(router.record(2), std::out_of_range);
  EXPECT_DOUBLE_EQ(router.window().end, 0.0);  // request 2 is measured and not sent yet
  router.admit(arrival(2, 0, 20), 2.0);
  EXPECT_THROW(router.admit(arrival(3, 1), 2.0), std::invalid_argument);
  router.tokenProduced(3, 1.5);
  router.tokenProduced(2, 2.5);
  EXPECT_EQ(router.record(3).inputTokens, 30U);
  EXPECT_DOUBLE_EQ(router.record(3).firstToken, 1.5);
  EXPECT_EQ(router.record(2).inputTokens, 20U);
  EXPECT_DOUBLE_EQ(router.record(2).firstToken, 2.5);
  EXPECT_EQ(router.records().size(), 3U);
  EXPECT_EQ(router.records()[1].id, 3U);  // sending order
  router.finished(1, 4.0, 0);
  router.finished(3, 5.0, 0);
  EXPECT_FALSE(router.completed());
  router.finished(2, 6.0, 0);
  EXPECT_TRUE(router.completed());
  EXPECT_DOUBLE_EQ(router.window().start, 0.0);
  EXPECT_DOUBLE_EQ(router.window().end, 6.0);
}

TEST(RequestRouter, MetricRecordsCutUnfinishedRequestsAndDropThoseWithoutTokens) {
  RequestRouter router({0}, {}, 0, 2);
  router.admit(arrival(1, -1, 10, 3), 0.0);
  router.admit(arrival(2, -1, 10, 3), 0.0);
  router.admit(arrival(3, -1, 10, 3), 0.0);
  for (double t : {1.0, 2.0, 3.0}) router.tokenProduced(1, t);
  router.finished(1, 3.0, 0);
  router.tokenProduced(2, 1.5);  // one of three tokens when the run stopped
  const std::vector<RequestRecord> records = router.metricRecords();
  ASSERT_EQ(records.size(), 2U);  // request 3 produced nothing
  EXPECT_EQ(records[0].outputTokens, 3U);
  EXPECT_TRUE(records[0].measured);
  EXPECT_EQ(records[1].id, 2U);
  EXPECT_EQ(records[1].outputTokens, 1U);
  EXPECT_DOUBLE_EQ(records[1].finish, 1.5);
  EXPECT_FALSE(records[1].measured);
}

// Replica classes: 11 users on 4 replicas are 3, 3, 3 and 2 users (user modulo 4); replica 0
// stands for 1 and 2, replica 3 for itself. The representatives' load is 5 users, and the warm-up
// and measured requests scale by 5/11, rounded up.
TEST(ReplicaClasses, UsersModuloReplicasGiveAtMostTwoClassesWithTheLoadScaledToTheirUsers) {
  const ReplicaClassPlan p = planReplicaClasses(4, 11, 11, 22);
  ASSERT_EQ(p.classes.size(), 2U);
  EXPECT_EQ(p.classes[0].representative, 0);
  EXPECT_EQ(p.classes[0].followers, std::vector<int>({1, 2}));
  EXPECT_EQ(p.classes[0].users, 3);
  EXPECT_EQ(p.classes[1].representative, 3);
  EXPECT_TRUE(p.classes[1].followers.empty());
  EXPECT_EQ(p.classes[1].users, 2);
  EXPECT_EQ(p.users, 5);
  EXPECT_EQ(p.warmup, 5U);
  EXPECT_EQ(p.measured, 10U);
  EXPECT_EQ(p.leaderOf, std::vector<int>({-1, 0, 0, -1}));
  EXPECT_EQ(p.entries(), std::vector<int>({0, 3}));
  EXPECT_TRUE(p.mirrors());
  // The router sends simulated user u to entries[u % 2]: 3 users to replica 0, 2 to replica 3.
  RequestRouter router(p.entries(), {}, p.warmup, p.measured);
  int toZero = 0;
  for (int u = 0; u < p.users; ++u) toZero += router.admit(arrival(static_cast<uint64_t>(u) + 1, u), 0.0) == 0 ? 1 : 0;
  EXPECT_EQ(toZero, 3);
}

TEST(ReplicaClasses, EvenLoadIsOneClassFewerUsersThanReplicasLeaveTheRestIdleAndOneReplicaSavesNothing) {
  const ReplicaClassPlan even = planReplicaClasses(9, 63, 63, 64);  // 7 users each
  ASSERT_EQ(even.classes.size(), 1U);
  EXPECT_EQ(even.classes[0].followers.size(), 8U);
  EXPECT_EQ(even.users, 7);
  EXPECT_EQ(even.measured, 8U);                                 // ceil(64 x 7 / 63)
  const ReplicaClassPlan few = planReplicaClasses(9, 4, 4, 4);  // replicas 0-3 one user each, 4-8 idle
  ASSERT_EQ(few.classes.size(), 1U);
  EXPECT_EQ(few.classes[0].followers, std::vector<int>({1, 2, 3}));
  EXPECT_EQ(few.leaderOf, std::vector<int>({-1, 0, 0, 0, -1, -1, -1, -1, -1}));
  EXPECT_EQ(few.users, 1);
  EXPECT_EQ(few.measured, 1U);
  EXPECT_FALSE(planReplicaClasses(1, 64, 64, 64).mirrors());
  EXPECT_FALSE(planReplicaClasses(9, 1, 1, 8).mirrors());
  EXPECT_THROW(planReplicaClasses(0, 4, 0, 1), std::invalid_argument);
  EXPECT_THROW(planReplicaClasses(4, 0, 0, 1), std::invalid_argument);
}

// A mirroring replica's requests are its representative's again, under its index and new ids;
// unfinished requests are cut before they are copied.
TEST(RequestRouter, MetricRecordsRepeatARepresentativesRequestsForEveryReplicaThatMirrorsIt) {
  RequestRouter router({0, 3}, {}, 0, 2);
  router.setMirrors({-1, 0, 0, -1});
  router.admit(arrival(1, 0, 10, 2), 0.0);  // user 0 -> replica 0
  router.admit(arrival(2, 1, 10, 2), 0.0);  // user 1 -> replica 3
  for (const uint64_t id : {1U, 2U}) {
    router.tokenProduced(id, 1.0);
    router.tokenProduced(id, 2.0);
    router.finished(id, 2.0, 0);
  }
  const std::vector<RequestRecord> records = router.metricRecords();
  ASSERT_EQ(records.size(), 4U);  // both, then request 1 for replicas 1 and 2
  EXPECT_EQ(records[2].replica, 1);
  EXPECT_EQ(records[3].replica, 2);
  EXPECT_EQ(records[2].id, 3U);  // above the two sent
  EXPECT_EQ(records[3].id, 5U);
  EXPECT_EQ(records[2].tokenTimes, records[0].tokenTimes);
  EXPECT_TRUE(records[3].measured);
  EXPECT_EQ(router.records().size(), 2U);  // the simulated requests alone
}

}  // namespace
}  // namespace scoville::workload
