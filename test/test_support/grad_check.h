// kiln/test/test_support/grad_check.h — a sample's gradients against f64 central finite
// differences (PyTorch's gradcheck, with its tolerances).
//
// The sample runs as test_support/grad_run.h describes: f64 leaves, the differentiable outputs
// contracted with fixed cotangents into one scalar L, and the gradients dL/dx. Each input
// element's derivative is also measured as (L(x + h) - L(x - h)) / 2h at h = 1e-6, with L
// computed by the function as the run ran it (GradRun::fn: eagerly, or the compiled training
// entry's forward program, called warm), and must agree within atol 1e-5 + rtol 1e-3. Elements
// where the function is not smooth (a kink, a jump, a tie of a max) are recognized and skipped:
// at such a point the one-sided differences disagree (a kink exactly at x), or a second estimate
// at h = 1e-4 disagrees with the first (one within reach of the step). What an op returns at
// its kinks is PyTorch's convention, which the golden gradients check
// (test_opdb_golden_grad.cpp). Also skipped: samples with non-finite outputs or outputs below
// f64 (a difference of 1e-6 is under an f32 or f16 step), and the entries of
// not_by_differences. Large inputs are probed at up to 48 evenly spaced elements.
#pragma once

#include "test_support/grad_run.h"

#include <string>
#include <vector>

namespace kiln::opdb {

struct GradCheckTally {
  int samples = 0, elements = 0, skipped_kinks = 0;
};

// Why finite differences cannot check the entry `name`, or null when they can.
const char* not_by_differences(const std::string& name);

// Checks `grads` (grads_of(r)) against finite differences of `r`'s function; failures go to
// gtest.
void check_finite_differences(const GradRun& r, const std::vector<Tensor>& grads, GradCheckTally& tally);

}  // namespace kiln::opdb
