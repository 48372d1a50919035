#include <gtest/gtest.h>

#include <cmath>

#include "stats/StatsGroup.h"
#include "tlm/PayloadPool.h"
#include "tlm/Precision.h"
#include "tlm/Time.h"

namespace scoville {
namespace {

TEST(Stats, CountersFormulasAndChildrenSerialise) {
  stats::Group parent("chip", "a chip");
  stats::Group child("hbm", "memory");
  stats::Counter& bytes = child.counter("bytes", "B", "bytes moved");
  child.formula("kib", "KiB", "bytes in KiB", [&bytes] { return bytes.value() / 1024; });
  parent.addChild(child);
  bytes.add(2048);
  const auto json = parent.toJson();
  EXPECT_EQ(json["groups"]["hbm"]["stats"]["bytes"]["value"], 2048.0);
  EXPECT_EQ(json["groups"]["hbm"]["stats"]["kib"]["value"], 2.0);
  EXPECT_EQ(json["groups"]["hbm"]["stats"]["bytes"]["unit"], "B");
  EXPECT_DOUBLE_EQ(child.value("kib"), 2.0);
  EXPECT_THROW(child.value("nope"), std::out_of_range);
}

// The inline conversion on hot paths gives SystemC's own bits, so reports do not depend on which
// one a module uses.
TEST(Time, SecondsIsToSecondsBitForBit) {
  uint64_t value = 1;
  for (int i = 0; i < 4000; ++i) {
    const sc_core::sc_time t = sc_core::sc_time::from_value(value);
    ASSERT_EQ(tlm::seconds(t), t.to_seconds()) << "ticks " << value;
    value = value * 3 + static_cast<uint64_t>(i) % 7;
    if (value > (uint64_t{1} << 62)) value = static_cast<uint64_t>(i) + 1;
  }
  EXPECT_EQ(tlm::seconds(sc_core::SC_ZERO_TIME), 0.0);
  EXPECT_EQ(tlm::durationCeil(1.5e-12), sc_core::sc_time::from_value(2));
}

// Issue 38: a duration SystemC's 64-bit clock cannot hold, or that could wrap around once added to
// any time a run reaches, is an error, never a wrapped (shorter) time.
TEST(Time, DurationsBeyondTheSimulatedTimeLimitOrNegativeAreErrors) {
  EXPECT_DOUBLE_EQ(tlm::durationCeil(tlm::kMaxSimulatedTimeS).to_seconds(), tlm::kMaxSimulatedTimeS);
  EXPECT_EQ(tlm::durationCeil(-1e-13), sc_core::SC_ZERO_TIME) << "rounding noise below one tick is zero";
  for (const double bad : {1e8, 2.0 * tlm::kMaxSimulatedTimeS, -1.0, std::nan(""), HUGE_VAL}) {
    SCOPED_TRACE(bad);
    try {
      tlm::durationCeil(bad);
      ADD_FAILURE() << "accepted";
    } catch (const tlm::TimeRangeError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(tlm::kTimeRangeMessage, 0), 0u) << e.what();
    }
  }
  // The limit leaves SystemC's range (2^64 ticks) to spare for a time plus a duration.
  EXPECT_LT(2.0 * tlm::kMaxSimulatedTimeS / tlm::resolutionSeconds(), 0x1p64);
}

TEST(PayloadPool, RecyclesPayloadsAndResetsTheirExtension) {
  tlm::PayloadPool pool;
  ::tlm::tlm_generic_payload* first = nullptr;
  {
    tlm::PayloadRef ref(pool);
    first = &*ref;
    ref.op().bytes = 42;
    ref->set_address(7);
  }
  tlm::PayloadRef again(pool);
  EXPECT_EQ(&*again, first);
  EXPECT_EQ(again.op().bytes, 0u);
  EXPECT_EQ(again->get_address(), 0u);
  EXPECT_EQ(pool.created(), 1u);
  tlm::PayloadRef second(pool);
  EXPECT_EQ(pool.created(), 2u);
}

TEST(Precision, Mxfp4CountsItsBlockScales) {
  EXPECT_DOUBLE_EQ(tlm::bitsPerElement(tlm::Precision::kFp4), 4.25);
  EXPECT_DOUBLE_EQ(tlm::bitsPerElement(tlm::Precision::kBf16), 16.0);
}

}  // namespace
}  // namespace scoville
