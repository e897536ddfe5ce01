// Grader performance, as ratios against a reference measured in the same run (not a test):
//  - edit distance of two long outputs: the bit-parallel Levenshtein vs the textbook O(n*m) DP;
//  - GSM8K grading of every train solution: with cached compiled regexes vs compiling per call.
//   bench-graders [path/to/gsm8k/train.jsonl]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "datasets/common/edit_distance.h"
#include "datasets/common/pcre_regex.h"
#include "harness/core/rng.h"
#include "datasets/gsm8k/gsm8k_data.h"
#include "datasets/gsm8k/gsm8k_extract.h"

namespace {

double seconds_of(const auto& fn, int reps) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

std::size_t dp(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

int main(int argc, char** argv) {
  // Two 8,000-character outputs that differ in ~10% of places, spread out (no shared prefix/suffix
  // shortcut beyond the first and last edit).
  kvgate::Rng rng(1);
  std::string a, b;
  for (int i = 0; i < 8000; ++i) a.push_back(static_cast<char>('a' + rng.below(26)));
  b = a;
  b[0] = '#';
  b.back() = '#';
  for (int i = 0; i < 800; ++i) b[rng.below(b.size())] = static_cast<char>('a' + rng.below(26));
  std::size_t d1 = 0, d2 = 0;
  const double fast = seconds_of([&] { d1 = kvgate::levenshtein_distance(a, b); }, 5);
  const double slow = seconds_of([&] { d2 = dp(a, b); }, 2);
  std::printf("edit distance, 8000 x 8000 chars: bit-parallel %.2f ms, textbook DP %.1f ms: %.0fx faster (distances %zu = %zu)\n",
              fast * 1e3, slow * 1e3, slow / fast, d1, d2);

  const std::string path = argc > 1 ? argv[1] : "tests/data/gsm8k/train.jsonl";
  const kvgate::Gsm8kFile train = kvgate::load_gsm8k(path);
  std::size_t correct = 0;
  const double cached = seconds_of([&] {
    correct = 0;
    for (const auto& p : train.problems) correct += kvgate::score_gsm8k(p.answer, p.answer).flexible.correct;
  }, 3);
  const double uncached = seconds_of([&] {
    for (const auto& p : train.problems) {
      (void)kvgate::regex_filter(kvgate::Regex(kvgate::kGsm8kStrictRegex), p.answer, 0);
      (void)kvgate::regex_filter(kvgate::Regex(kvgate::kGsm8kFlexibleRegex), p.answer, -1);
    }
  }, 3);
  const double n = static_cast<double>(train.problems.size());
  std::printf("gsm8k grading, %zu responses: %.2f us each (%zu correct); compiling the two patterns per call: %.2f us each: %.1fx\n",
              train.problems.size(), cached / n * 1e6, correct, uncached / n * 1e6, uncached / cached);
  return d1 == d2 ? 0 : 1;
}
