#include <gtest/gtest.h>

#include "config/Units.h"

namespace scoville::config {
namespace {

TEST(Units, ParsesTheQuantitiesOfTheBrief) {
  EXPECT_DOUBLE_EQ(parseQuantityAs("4.8 TB/s", dim::kBandwidth), 4.8e12);
  EXPECT_DOUBLE_EQ(parseQuantityAs("700 W", dim::kPower), 700.0);
  EXPECT_DOUBLE_EQ(parseQuantityAs("1.8 GHz", dim::kFrequency), 1.8e9);
  EXPECT_DOUBLE_EQ(parseQuantityAs("96 MiB", dim::kBytes), 96.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parseQuantityAs("250 ns", dim::kTime), 250e-9);
  EXPECT_DOUBLE_EQ(parseQuantityAs("3.9 pJ/bit", dim::kEnergyPerByte), 3.9e-12 * 8);
  EXPECT_DOUBLE_EQ(parseQuantityAs("2.5 PFLOP/s", dim::kFlopRate), 2.5e15);
  EXPECT_DOUBLE_EQ(parseQuantityAs("0.2 pJ/FLOP", dim::kEnergyPerFlop), 0.2e-12);
}

TEST(Units, DistinguishesBitsFromBytesAndMilliFromMega) {
  EXPECT_DOUBLE_EQ(parseQuantityAs("800 Gb/s", dim::kBandwidth), 100e9);
  EXPECT_DOUBLE_EQ(parseQuantityAs("800 Gbps", dim::kBandwidth), 100e9);
  EXPECT_DOUBLE_EQ(parseQuantityAs("800 Gbit/s", dim::kBandwidth), 100e9);
  EXPECT_DOUBLE_EQ(parseQuantityAs("5 mW", dim::kPower), 5e-3);
  EXPECT_DOUBLE_EQ(parseQuantityAs("5 MW", dim::kPower), 5e6);
  EXPECT_DOUBLE_EQ(parseQuantityAs("2 ms", dim::kTime), 2e-3);
  EXPECT_DOUBLE_EQ(parseQuantityAs("1 KiB", dim::kBytes), 1024.0);
  EXPECT_DOUBLE_EQ(parseQuantityAs("1 kB", dim::kBytes), 1000.0);
}

TEST(Units, AcceptsSpacingAndExponents) {
  EXPECT_DOUBLE_EQ(parseQuantityAs("4.8TB/s", dim::kBandwidth), 4.8e12);
  EXPECT_DOUBLE_EQ(parseQuantityAs("  1e3 MHz ", dim::kFrequency), 1e9);
  EXPECT_DOUBLE_EQ(parseQuantityAs("4.8 TB / s", dim::kBandwidth), 4.8e12);
}

TEST(Units, RejectsMissingOrUnknownUnits) {
  EXPECT_THROW(parseQuantity("4.8"), UnitError);
  EXPECT_THROW(parseQuantity("4.8 furlongs"), UnitError);
  EXPECT_THROW(parseQuantity("TB/s"), UnitError);
  EXPECT_THROW(parseQuantity(""), UnitError);
  EXPECT_THROW(parseQuantity("nan W"), UnitError);
  EXPECT_THROW(parseQuantity("inf W"), UnitError);
  EXPECT_THROW(parseQuantity("0x10 W"), UnitError);
  EXPECT_THROW(parseQuantity("1 KiHz"), UnitError) << "binary prefixes are for bytes and bits only";
  EXPECT_THROW(parseQuantity("1 pJ/bit/mm/s"), UnitError) << "at most two divisions";
  EXPECT_THROW(parseQuantity("1 pJ/bit/"), UnitError);
  EXPECT_THROW(parseQuantityAs("1 B/s/s", dim::kBandwidth), UnitError) << "B/s/s is not a bandwidth";
}

// Issue 38: the number is finite, but not once its unit is applied.
TEST(Units, RejectsValuesThatOverflowOrVanishOnceScaled) {
  for (const char* text : {"1e308 TB/s", "1e300 GHz", "1e308 TB", "1e305 PFLOP/s"}) {
    SCOPED_TRACE(text);
    try {
      parseQuantity(text);
      ADD_FAILURE() << "accepted";
    } catch (const UnitError& e) {
      EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parseQuantity("1e-310 fs"), UnitError);
  EXPECT_THROW(parseQuantity("8 B/b"), UnitError) << "units that cancel out (found by the fuzzer)";
  EXPECT_EQ(parseQuantity("0 TB/s").value, 0.0);
  EXPECT_DOUBLE_EQ(parseQuantity("1e290 TB").value, 1e302);
}

TEST(Units, PlausibleRangesBoundEveryTimeAndFloorTheRates) {
  EXPECT_EQ(plausibleRange(dim::kTime).max, kMaxConfigTimeS);
  EXPECT_LE(kMaxConfigTimeS, kMaxSimulatedTimeS);
  for (const Dimension d : {dim::kBandwidth, dim::kFrequency, dim::kFlopRate}) {
    EXPECT_GT(plausibleRange(d).min, 0.0) << dimensionName(d);
  }
  EXPECT_EQ(plausibleRange(dim::kDimensionless).max, 0.0) << "plain numbers have their own ranges";
  EXPECT_NE(plausibleRangesMarkdown().find("| bandwidth | 100 MB/s |"), std::string::npos) << plausibleRangesMarkdown();
  EXPECT_EQ(plausibleRange(dim::kBytes).min, 1.0) << "a size of half a byte ('500 mB') is a slip";
  EXPECT_EQ(aDimension(dim::kEnergy), "an energy");
  EXPECT_EQ(aDimension(dim::kTime), "a time");
}

TEST(Units, WireLengthsAndEnergyPerBitAndMillimetre) {
  EXPECT_DOUBLE_EQ(parseQuantityAs("15 mm", dim::kLength), 15e-3);
  EXPECT_DOUBLE_EQ(parseQuantityAs("2 m", dim::kLength), 2.0);
  EXPECT_DOUBLE_EQ(parseQuantityAs("300 um", dim::kLength), 300e-6);
  EXPECT_DOUBLE_EQ(parseQuantityAs("2 ms", dim::kTime), 2e-3) << "a millisecond, not a metre-second";
  // 0.1 pJ per bit and millimetre = 0.8 pJ per byte and millimetre = 0.8 nJ per byte and metre.
  EXPECT_DOUBLE_EQ(parseQuantityAs("0.1 pJ/bit/mm", dim::kEnergyPerByteLength), 0.1e-12 * 8 / 1e-3);
  EXPECT_THROW(parseQuantityAs("0.1 pJ/bit", dim::kEnergyPerByteLength), UnitError);
  EXPECT_EQ(dimensionName(dim::kLength), "length");
}

TEST(Units, WrongDimensionNamesBothKinds) {
  try {
    parseQuantityAs("4.8 TB", dim::kBandwidth);
    FAIL() << "a size is not a bandwidth";
  } catch (const UnitError& e) {
    {
      const std::string message = e.what();
      EXPECT_NE(message.find("is a size"), std::string::npos) << message;
      EXPECT_NE(message.find("expected a bandwidth"), std::string::npos) << message;
      EXPECT_NE(message.find("4.8 TB/s"), std::string::npos) << message;
    }
  }
}

TEST(Units, FormatRoundTrips) {
  EXPECT_EQ(formatQuantity(4.8e12, dim::kBandwidth), "4.8 TB/s");
  EXPECT_EQ(formatQuantity(700.0, dim::kPower), "700 W");
  EXPECT_EQ(formatQuantity(250e-9, dim::kTime), "250 ns");
  EXPECT_EQ(formatQuantity(0.0, dim::kTime), "0 s");
  for (double v : {1.5e-10, 3.3e-3, 42.0, 7.2e12, 1.887e15}) {
    EXPECT_NEAR(parseQuantityAs(formatQuantity(v, dim::kBandwidth), dim::kBandwidth), v, v * 1e-3);
  }
}

}  // namespace
}  // namespace scoville::config
