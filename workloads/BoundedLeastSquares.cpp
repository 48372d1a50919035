#include "workloads/BoundedLeastSquares.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace scoville::workload {

namespace {

using Matrix = std::vector<std::vector<double>>;

/// Solves M y = r by Gaussian elimination with partial pivoting (M small and symmetric positive
/// definite here); throws when it is singular.
std::vector<double> solve(Matrix m, std::vector<double> r) {
  const std::size_t n = r.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t i = c + 1; i < n; ++i) {
      if (std::fabs(m[i][c]) > std::fabs(m[pivot][c])) pivot = i;
    }
    if (std::fabs(m[pivot][c]) < 1e-300) {
      throw std::runtime_error("bounded least squares: the normal equations are singular (add prior rows)");
    }
    std::swap(m[c], m[pivot]);
    std::swap(r[c], r[pivot]);
    for (std::size_t i = c + 1; i < n; ++i) {
      const double f = m[i][c] / m[c][c];
      if (f == 0.0) continue;
      for (std::size_t j = c; j < n; ++j) m[i][j] -= f * m[c][j];
      r[i] -= f * r[c];
    }
  }
  std::vector<double> y(n, 0.0);
  for (std::size_t i = n; i-- > 0;) {
    double s = r[i];
    for (std::size_t j = i + 1; j < n; ++j) s -= m[i][j] * y[j];
    y[i] = s / m[i][i];
  }
  return y;
}

}  // namespace

BoundedLeastSquares solveBoundedLeastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& b,
                                             const std::vector<double>& lo, const std::vector<double>& hi) {
  const std::size_t n = lo.size();
  if (hi.size() != n || rows.size() != b.size()) throw std::invalid_argument("bounded least squares: sizes differ");
  for (const auto& row : rows) {
    if (row.size() != n) throw std::invalid_argument("bounded least squares: a row has the wrong length");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!(lo[i] <= hi[i])) throw std::invalid_argument("bounded least squares: an empty bound");
  }
  // The normal equations: minimise x^T H x / 2 - g^T x.
  Matrix h(n, std::vector<double>(n, 0.0));
  std::vector<double> g(n, 0.0);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      g[i] += rows[r][i] * b[r];
      for (std::size_t j = 0; j < n; ++j) h[i][j] += rows[r][i] * rows[r][j];
    }
  }
  // Start at the lower bounds, all held there.
  BoundedLeastSquares out;
  out.x = lo;
  std::vector<int> held(n, -1);  // -1 held at lo, +1 at hi, 0 free
  const auto gradient = [&](std::size_t i) {
    double s = -g[i];
    for (std::size_t j = 0; j < n; ++j) s += h[i][j] * out.x[j];
    return s;
  };
  const int maxIterations = static_cast<int>(50 * (n + 1) * (n + 1));
  // Multipliers smaller than this are rounding: the optimum is on the bound.
  double tolerance = 0.0;
  for (std::size_t i = 0; i < n; ++i) tolerance = std::max(tolerance, std::fabs(g[i]));
  tolerance = 1e-12 * std::max(tolerance, 1e-300);
  for (out.iterations = 0; out.iterations < maxIterations; ++out.iterations) {
    std::vector<std::size_t> free;
    for (std::size_t i = 0; i < n; ++i) {
      if (held[i] == 0) free.push_back(i);
    }
    // The optimum over the free variables, the held ones fixed.
    std::vector<double> target = out.x;
    if (!free.empty()) {
      Matrix m(free.size(), std::vector<double>(free.size()));
      std::vector<double> r(free.size());
      for (std::size_t a = 0; a < free.size(); ++a) {
        r[a] = g[free[a]];
        for (std::size_t j = 0; j < n; ++j) {
          if (held[j] != 0) r[a] -= h[free[a]][j] * out.x[j];
        }
        for (std::size_t c = 0; c < free.size(); ++c) m[a][c] = h[free[a]][free[c]];
      }
      const std::vector<double> y = solve(std::move(m), std::move(r));
      for (std::size_t a = 0; a < free.size(); ++a) target[free[a]] = y[a];
    }
    // Step towards it as far as the bounds allow; a variable that stops the step is held.
    double step = 1.0;
    std::size_t blocking = n;
    for (const std::size_t i : free) {
      const double d = target[i] - out.x[i];
      if (d < 0.0 && target[i] < lo[i]) {
        const double s = (lo[i] - out.x[i]) / d;
        if (s < step) step = s, blocking = i;
      } else if (d > 0.0 && target[i] > hi[i]) {
        const double s = (hi[i] - out.x[i]) / d;
        if (s < step) step = s, blocking = i;
      }
    }
    for (const std::size_t i : free) out.x[i] = std::clamp(out.x[i] + step * (target[i] - out.x[i]), lo[i], hi[i]);
    if (blocking < n) {
      held[blocking] = target[blocking] < lo[blocking] ? -1 : 1;
      out.x[blocking] = held[blocking] < 0 ? lo[blocking] : hi[blocking];
      continue;
    }
    // At the optimum of this set: release the held variable whose multiplier is most wrong.
    std::size_t release = n;
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (held[i] == 0 || lo[i] == hi[i]) continue;
      const double grad = gradient(i);
      const double wrong = held[i] < 0 ? -grad : grad;  // at lo the gradient must be >= 0, at hi <= 0
      if (wrong > tolerance && wrong > worst) {
        worst = wrong;
        release = i;
      }
    }
    if (release == n) break;
    held[release] = 0;
  }
  out.atLower.assign(n, false);
  out.atUpper.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    out.atLower[i] = held[i] < 0;
    out.atUpper[i] = held[i] > 0;
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double e = -b[r];
    for (std::size_t i = 0; i < n; ++i) e += rows[r][i] * out.x[i];
    out.residual += e * e;
  }
  return out;
}

}  // namespace scoville::workload
