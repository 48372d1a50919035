// Test main for every Scoville test binary. libsystemc defines main() and calls sc_main(), so
// GoogleTest's own main is never linked. SystemC warnings and errors become test failures.
#include <gtest/gtest.h>
#include <systemc>

namespace {

void failOnSystemCReport(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  if (report.get_severity() >= sc_core::SC_WARNING) {
    ADD_FAILURE() << "SystemC " << (report.get_severity() == sc_core::SC_WARNING ? "warning" : "error") << " ["
                  << report.get_msg_type() << "]: " << report.get_msg();
  }
  sc_core::sc_report_handler::default_handler(report, actions);
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_handler(failOnSystemCReport);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
