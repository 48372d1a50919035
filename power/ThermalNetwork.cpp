#include "power/ThermalNetwork.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace scoville::power {

ThermalNetwork::ThermalNetwork(std::vector<Node> nodes) : m_nodes(std::move(nodes)) {
  const auto n = static_cast<Eigen::Index>(m_nodes.size());
  if (n == 0) throw std::invalid_argument("thermal network: no nodes");
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Node& node = m_nodes[static_cast<std::size_t>(i)];
    if (!(node.resistanceKPerW > 0.0) || !(node.capacitanceJPerK > 0.0) || !std::isfinite(node.resistanceKPerW) ||
        !std::isfinite(node.capacitanceJPerK)) {
      throw std::invalid_argument(
          fmt::format("thermal network: node '{}' needs a positive resistance and capacitance", node.name));
    }
    if (node.parent < -1 || node.parent >= n || node.parent == i) {
      throw std::invalid_argument(fmt::format("thermal network: node '{}' has no parent {}", node.name, node.parent));
    }
    // Every node must reach the ambient without a cycle.
    int at = static_cast<int>(i);
    for (Eigen::Index hops = 0; at != -1; ++hops) {
      if (hops > n) throw std::invalid_argument(fmt::format("thermal network: node '{}' is on a cycle", node.name));
      at = m_nodes[static_cast<std::size_t>(at)].parent;
    }
    const double c = 1.0 / node.resistanceKPerW;
    g(i, i) += c;
    if (node.parent >= 0) {
      g(node.parent, node.parent) += c;
      g(i, node.parent) -= c;
      g(node.parent, i) -= c;
    }
  }
  const Eigen::MatrixXd z = g.inverse();
  Eigen::VectorXd sqrtC(n);
  for (Eigen::Index i = 0; i < n; ++i) sqrtC(i) = std::sqrt(m_nodes[static_cast<std::size_t>(i)].capacitanceJPerK);
  const Eigen::MatrixXd s = sqrtC.cwiseInverse().asDiagonal() * g * sqrtC.cwiseInverse().asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(s);
  const Eigen::MatrixXd left = sqrtC.cwiseInverse().asDiagonal() * eigen.eigenvectors();
  const Eigen::MatrixXd right = eigen.eigenvectors().transpose() * sqrtC.asDiagonal();
  const auto size = static_cast<std::size_t>(n);
  m_z.resize(size * size);
  m_left.resize(size * size);
  m_right.resize(size * size);
  m_rates.resize(size);
  for (Eigen::Index i = 0; i < n; ++i) {
    m_rates[static_cast<std::size_t>(i)] = eigen.eigenvalues()(i);
    for (Eigen::Index j = 0; j < n; ++j) {
      const auto k = static_cast<std::size_t>(i * n + j);
      m_z[k] = z(i, j);
      m_left[k] = left(i, j);
      m_right[k] = right(i, j);
    }
  }
  m_scratch.resize(2 * size);
}

std::vector<double> ThermalNetwork::steadyRise(const std::vector<double>& powerW) const {
  const std::size_t n = size();
  std::vector<double> rise(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) rise[i] += m_z[i * n + j] * powerW[j];
  }
  return rise;
}

void ThermalNetwork::step(std::vector<double>& rise, const std::vector<double>& powerW, double dtS) const {
  const std::size_t n = size();
  double* const offset = m_scratch.data();  // x - x_ss, then its modal coordinates
  double* const modal = m_scratch.data() + n;
  for (std::size_t i = 0; i < n; ++i) {
    double ss = 0.0;
    for (std::size_t j = 0; j < n; ++j) ss += m_z[i * n + j] * powerW[j];
    offset[i] = rise[i] - ss;
    rise[i] = ss;
  }
  for (std::size_t k = 0; k < n; ++k) {
    double y = 0.0;
    for (std::size_t j = 0; j < n; ++j) y += m_right[k * n + j] * offset[j];
    modal[k] = y * std::exp(-m_rates[k] * dtS);
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < n; ++k) rise[i] += m_left[i * n + k] * modal[k];
  }
}

std::vector<double> ThermalNetwork::timeConstantsS() const {
  std::vector<double> tau;
  for (double rate : m_rates) tau.push_back(1.0 / rate);
  std::sort(tau.rbegin(), tau.rend());
  return tau;
}

}  // namespace scoville::power
