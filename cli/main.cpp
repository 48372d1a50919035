// The scoville executable. libsystemc provides main() and calls sc_main().
#include <iostream>
#include <systemc>

#include "cli/Commands.h"

int sc_main(int argc, char* argv[]) { return scoville::cli::runMain(argc, argv, std::cout, std::cerr); }
