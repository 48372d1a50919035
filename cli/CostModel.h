#pragma once
// What a run will cost in wall-clock time, predicted before elaboration (`scoville run --dry-run`;
// docs/performance.md#cost-model). The simulator's time goes to the transactions of the steps it
// simulates in detail, which grow with the tiles a chip's step is planned in, times the chips
// that simulate (a replica's pipeline stages: tensor-parallel ranks mirror their rank 0), times
// the replicas that simulate (one per replica class), plus the steps it replays (sampled decode
// steps: their merged activity, in proportion to the same tiles) and a cost per chip of the
// platform (elaboration, power model, idle chips' bookkeeping):
//
//   wall = c0 + c_chip x chips + (c_step + c_tile x tiles x simulated chips) x detailed decode steps
//        + c_prompt x groups x prompt tiles x simulated chips x prompt steps + c_replay x replayed steps
// (per simulated replica), where groups is the chip's timed HBM channel groups (every large access
// of a prompt step is timed on each).
//
// The steps come from the scenario (requests, lengths, users per replica, the scheduler's chunk)
// and the sampling period; the tiles from planning one representative decode step (the mean
// context, the users of the busiest simulated replica) on the platform's first chip. The
// constants are fitted by scripts/bench-cost-model on a named training set of measured runs.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/Inputs.h"
#include "cli/RunRequest.h"

namespace scoville::cli {

struct CostEstimate {
  std::string kind;  ///< serving or decode_step
  int chips = 0;
  int replicas = 0;
  int simulatedReplicas = 0;  ///< replica classes' representatives that serve users, or every replica
  int simulatedChips =
      0;  ///< per simulated replica: chips that simulate (the stages; every chip with --exact-all-chips)
  bool replicaClasses = false;
  bool sampled = false;             ///< decode steps sampled (--sample-period >= 2, a closed loop)
  double usersPerReplica = 0.0;     ///< of the busiest simulated replica
  double requestsPerReplica = 0.0;  ///< requests it serves, the ones in flight at the end included
  double steps = 0.0;               ///< per simulated replica
  double promptSteps = 0.0;
  double detailedSteps = 0.0;  ///< decode steps simulated in detail
  double replayedSteps = 0.0;
  double tilesPerStep = 0.0;        ///< one chip's tiles in a representative decode step
  double promptTilesPerStep = 0.0;  ///< in a step with a prompt chunk (and the other users' decodes)
  int channelGroups = 1;            ///< the chip's HBM channels as timed (lockstep groups)
  double wallS = 0.0;               ///< the prediction

  /// The model's terms (what scripts/bench-cost-model fits), by name.
  nlohmann::ordered_json features() const;
};

/// The prediction for `inputs` run as `request` asks, its decode steps sampled at `samplePeriod`
/// (samplingRequest(); 0: every step simulated). Throws config::ConfigError where planning the
/// representative step does (a model that does not split or fit).
CostEstimate estimateRunCost(const Inputs& inputs, const RunRequest& request, int samplePeriod);

/// The estimate as the dry run prints it.
std::string describe(const CostEstimate& estimate);

}  // namespace scoville::cli
