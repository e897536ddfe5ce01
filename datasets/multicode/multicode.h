// multicode: the hard retrieval test of seed 001 ("Quantizing the KV Cache: FP8 and Below"):
// filler text with N lines "The access code for <Name>-<n> is <6 digits>." at random depths, all
// names one base name with different numbers, and one question asking for several codes at once.
// A trial passes only when every asked code is exact and given for its own name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/common/input_api.h"
#include "harness/core/grade.h"
#include "harness/core/trial.h"
#include "datasets/haystack/corpus.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::multicode {

struct MulticodeOptions {
  std::uint64_t seed = 1;
  std::vector<std::int64_t> lengths;
  int per_bucket = 50;
  int lines = 64;  // code lines in each haystack
  int ask = 4;     // codes asked at once
  InputApi api = InputApi::chat;
  const haystack::Corpus* corpus = nullptr;
  double tolerance = 0.005;
  int max_tokens = 256;  // generation hint in each input; 0 leaves it out
  int threads = 0;
};

// Ids "multicode/<bucket>/<index>". The target is {"codes": [{"name": "Juniper-24", "code": "951936"}, ...]}
// in the order asked; meta lists every line with its depth and offset.
std::vector<Trial> generate_multicode(const MulticodeOptions& options, const TokenCounter& counter);

// Reads "<Name>-<n> ... <6 digits>" pairs from an answer: each mention of a name owns the text up
// to the next mention, and the first standalone 6-digit number in it is the code given for that
// name (the first mention that gives one counts). Order does not matter; extra text is ignored.
struct ReadCodes {
  std::vector<std::string> given;  // per asked name: the code attributed to it, "" when none
};
ReadCodes read_codes(std::string_view answer, const std::string& base_name, const std::vector<std::string>& asked);

// The grader "multicode": score 1 only when every asked code is exact and attributed; details hold
// the fraction right, RULER's string_match_all (codes present anywhere) and the asked depths.
Grade grade_multicode(const GradeInput& input);

}  // namespace kvgate::multicode
