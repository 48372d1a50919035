// The serving front end's decisions: entry replicas, the decode hand-off, the records, the
// measurement window and completion. Pure logic, no SystemC.
#include <gtest/gtest.h>
#include <stdexcept>
#include <vector>

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

}  // namespace
}  // namespace scoville::workload
