// Shared helper of the stats tests: every expected value is a stats.md test vector, recomputed to
// 17 digits by tests/tools/stats_reference_values.py (mpmath, 40 digits, an independent
// implementation); the value stats.md prints is in the comment beside it.
#pragma once
#include "tests/catch_compat.hpp"

// Relative agreement well beyond the 1e-6 the issue asks for.
#define CHECK_VEC(actual, expected) CHECK((actual) == kvtest::Approx(expected).epsilon(1e-9).margin(1e-15))
