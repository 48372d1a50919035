#pragma once
// Bounded linear least squares: minimise |A x - b|^2 subject to lo <= x <= hi, for the few
// unknowns of a calibration fit. A primal active-set method (Nocedal and Wright, Numerical
// Optimization, 2nd ed., section 16.5): each iteration solves the unconstrained problem on the
// variables not held at a bound, steps towards it as far as the bounds allow, and releases a held
// variable whose Lagrange multiplier says the optimum lies inside. For a strictly convex problem
// (A of full column rank: add prior rows to make it so) it ends, exactly, in finitely many steps.

#include <string>
#include <vector>

namespace scoville::workload {

struct BoundedLeastSquares {
  std::vector<double> x;
  std::vector<bool> atLower;  ///< x[i] == lo[i] at the optimum with the bound binding
  std::vector<bool> atUpper;
  double residual = 0.0;  ///< |A x - b|^2
  int iterations = 0;
};

/// `rows` rows of A (each of the same length n), b, and the bounds (lo[i] <= hi[i]). Throws
/// std::invalid_argument for mismatched sizes or empty bounds, std::runtime_error when A^T A is
/// singular on the free variables (add prior rows).
BoundedLeastSquares solveBoundedLeastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& b,
                                             const std::vector<double>& lo, const std::vector<double>& hi);

}  // namespace scoville::workload
