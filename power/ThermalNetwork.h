#pragma once
// A lumped thermal RC network: nodes with a heat capacity, each joined by a thermal resistance to
// its parent node or, for a root, to the ambient (a tree, as heat flows from a die outward). It is
// linear, C dx/dt = P - G x, with x the nodes' rise over the ambient and G the conductance matrix,
// so under a constant power the exact solution is
//   x(t + dt) = x_ss + exp(-C^-1 G dt) (x(t) - x_ss),   x_ss = G^-1 P,
// which step() applies: a step is exact for any length whatever the network's time constants (the
// only error of a stepped run is the power's variation inside a step). The matrix exponential comes
// from the eigen-decomposition of the symmetric C^-1/2 G C^-1/2, computed once.

#include <cstddef>
#include <string>
#include <vector>

namespace scoville::power {

class ThermalNetwork {
 public:
  struct Node {
    std::string name;
    double resistanceKPerW = 0.0;  ///< to the parent (or the ambient)
    double capacitanceJPerK = 0.0;
    int parent = -1;  ///< index of the node it conducts into; -1: the ambient
  };

  /// Throws std::invalid_argument for a non-positive resistance or capacitance, a parent out of
  /// range, a cycle, or no path to the ambient.
  explicit ThermalNetwork(std::vector<Node> nodes);

  std::size_t size() const { return m_nodes.size(); }
  const Node& node(std::size_t i) const { return m_nodes.at(i); }

  /// Rise of node `i` over the ambient per watt injected at node `j`, in steady state (G^-1).
  double impedance(std::size_t i, std::size_t j) const { return m_z[i * size() + j]; }
  /// Steady-state rise of every node over the ambient under constant `powerW` per node.
  std::vector<double> steadyRise(const std::vector<double>& powerW) const;
  /// Advances `rise` (per node, over the ambient) by `dtS` under constant `powerW`, exactly.
  void step(std::vector<double>& rise, const std::vector<double>& powerW, double dtS) const;
  /// The network's time constants (1 / eigenvalue of C^-1 G), longest first.
  std::vector<double> timeConstantsS() const;

 private:
  std::vector<Node> m_nodes;
  std::vector<double> m_z;      ///< G^-1, row-major
  std::vector<double> m_rates;  ///< eigenvalues of C^-1 G (1/s)
  std::vector<double> m_left;   ///< C^-1/2 V, row-major
  std::vector<double> m_right;  ///< V^T C^1/2, row-major
  mutable std::vector<double> m_scratch;
};

}  // namespace scoville::power
