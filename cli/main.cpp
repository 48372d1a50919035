// The scoville executable. libsystemc provides main() and calls sc_main().
#include <cstdlib>
#include <iostream>
#include <systemc>

#include "cli/Commands.h"

namespace {
// SystemC prints its copyright banner to stderr before sc_main() runs unless this variable is
// set; set it (without overriding a user's choice) during static initialisation of this file.
const bool kBannerSilenced = ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;
}  // namespace

int sc_main(int argc, char* argv[]) {
  (void)kBannerSilenced;
  return scoville::cli::runMain(argc, argv, std::cout, std::cerr);
}
