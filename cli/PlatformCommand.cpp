#include <boost/program_options.hpp>
#include <ostream>

#include "cli/Commands.h"
#include "cli/Inputs.h"
#include "platforms/PlatformSummary.h"

namespace po = boost::program_options;

namespace scoville::cli {

int platformShowCommand(const Args& args, std::ostream& out) {
  InputOptions options;
  po::options_description description("scoville platform show: print a platform's units and totals");
  description.add_options()("help,h", "show this help")("json", "print the platform and its totals as JSON")(
      "dot", "print the topology as Graphviz DOT (render with: dot -Tsvg)");
  addInputOptions(description, options, false);
  po::positional_options_description positional;
  positional.add("platform", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(description).positional(positional).run(), vm);
  if (vm.count("help")) {
    out << "usage: scoville platform show [PLATFORM] [OPTIONS]\n" << description << "\n";
    return kExitOk;
  }
  po::notify(vm);
  if (vm.count("json") && vm.count("dot")) throw po::error("--json and --dot exclude each other");
  const Inputs inputs = loadInputs(options, false);
  if (vm.count("dot")) {
    platform::printDot(out, inputs.platform);
  } else if (vm.count("json")) {
    out << platform::summarize(inputs.platform).dump(2) << "\n";
  } else {
    platform::printTree(out, inputs.platform);
  }
  return kExitOk;
}

}  // namespace scoville::cli
