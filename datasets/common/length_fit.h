// Exact-length fitting: find the body size (in bytes) whose whole rendered input counts between
// target - floor(target * tolerance) and target tokens, with as few full counts as possible.
//
// Any generator whose input is "fixed parts + a body that grows with a byte budget" can use it
// (NIAH and multi-code haystacks, MRCR conversations): it builds a candidate for a budget, counts
// the whole rendered input once, and the search picks the next budget. The first count is of the
// empty body (the fixed part; too big means the target is infeasible); the second aims from the
// density guess; later ones interpolate between the closest counts below and above the window
// (secant steps, bisection when they stall). Typical: 3 counts, two of them full-size. When one
// byte of budget jumps over the window (short targets, small vocabularies), the search fails; the
// caller can then start a finer step from LengthFit::closest_below() (haystack_fine_step.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kvgate {

struct LengthFitSpec {
  std::int64_t target = 0;       // tokens: never exceeded
  double tolerance = 0.005;      // the lowest accepted count is target - floor(target * tolerance)
  std::int64_t reserve = 0;      // the highest accepted count is target - reserve (room for special tokens)
  double bytes_per_token = 4.0;  // first guess of the body's density (measure it once per run)
  int max_counts = 24;           // give up after this many counts
};

// One count: the budget asked, the body bytes it gave and the tokens of the whole input.
struct LengthProbe {
  std::int64_t budget = 0;
  std::int64_t body_bytes = 0;
  std::int64_t tokens = 0;
};

// The search as a stepper, so it can be tested on its own: ask next_budget(), build and count,
// observe(), until done().
class LengthFitSearch {
 public:
  explicit LengthFitSearch(const LengthFitSpec& spec);

  std::int64_t lowest() const { return lo_; }
  std::int64_t highest() const { return hi_; }
  bool done() const { return done_; }
  bool found() const { return found_; }
  // The reason when done() and !found(), for the caller's error message.
  const std::string& failure() const { return failure_; }
  const std::vector<LengthProbe>& probes() const { return probes_; }

  std::int64_t next_budget() const { return next_; }
  void observe(const LengthProbe& probe);

 private:
  void plan_next();

  LengthFitSpec spec_;
  std::int64_t lo_ = 0, hi_ = 0, aim_ = 0;
  std::int64_t next_ = 0;
  std::vector<LengthProbe> probes_;
  int below_ = -1, above_ = -1;  // indices of the bracketing probes (tokens < lo, tokens > hi)
  int same_side_ = 0;            // consecutive probes landing on the same side (stalled secant)
  int last_side_ = 0;
  bool done_ = false, found_ = false;
  std::string failure_;
};

template <class Candidate>
struct LengthFit {
  Candidate candidate{};
  std::int64_t tokens = 0;
  int counts = 0;  // full counts the search used
  bool found = false;
  std::string failure;  // why not found
  std::int64_t lowest = 0, highest = 0;
  std::vector<LengthProbe> probes;  // every count, in order (the first is the empty body)

  // The probe with the most tokens under the window, where a finer step can start; null when the
  // fixed part alone is over it (or nothing was counted).
  const LengthProbe* closest_below() const {
    const LengthProbe* best = nullptr;
    for (const LengthProbe& p : probes)
      if (p.tokens < lowest && (!best || p.tokens > best->tokens)) best = &p;
    return best;
  }
};

// Drives the search: build(budget) -> Candidate (with a `body_bytes` member), count(candidate) -> tokens.
// Returns the candidate whose count landed in the window, or found = false with the reason.
template <class Candidate, class Build, class Count>
LengthFit<Candidate> fit_length(const LengthFitSpec& spec, Build&& build, Count&& count) {
  LengthFitSearch search(spec);
  LengthFit<Candidate> fit;
  fit.lowest = search.lowest();
  fit.highest = search.highest();
  while (!search.done()) {
    const std::int64_t budget = search.next_budget();
    Candidate c = build(budget);
    const std::int64_t tokens = static_cast<std::int64_t>(count(c));
    ++fit.counts;
    search.observe({budget, static_cast<std::int64_t>(c.body_bytes), tokens});
    if (search.found()) {
      fit.candidate = std::move(c);
      fit.tokens = tokens;
    }
  }
  fit.found = search.found();
  fit.failure = search.failure();
  fit.probes = search.probes();
  return fit;
}

}  // namespace kvgate
