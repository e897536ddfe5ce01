// The official GSM8K files (github.com/openai/grade-school-math, grade_school_math/data/*.jsonl):
// one JSON object a line with "question" and "answer" (a worked solution ending "#### N").
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/http_fetch.h"

namespace kvgate {

struct Gsm8kProblem {
  std::size_t index = 0;     // 0-based position in the file: trial ids use it ("gsm8k/0042")
  std::size_t line = 0;      // 1-based line in the file, for messages
  std::string question{};
  std::string answer{};        // the whole solution, as lm-eval's doc_to_target
  std::string final_answer{};  // the text after the last "####", trimmed ("72", "1,000")
};

struct Gsm8kFile {
  std::string path{};
  std::string sha256{};
  std::vector<Gsm8kProblem> problems{};
};

// Reads a GSM8K JSONL file. Errors name the file and line: a line that is not a JSON object, a
// missing or non-string "question"/"answer", an answer without "#### N", an empty file.
Gsm8kFile load_gsm8k(const std::string& path);

// The text after the last "####" of an answer, trimmed; "" when there is no "####".
std::string gsm8k_final_answer(std::string_view answer);

struct Gsm8kSplit {
  const char* name;    // "test" | "train"
  const char* file;    // file name in the repository and in the cache
  const char* sha256;  // of the official file
  std::size_t rows{};
};
// The official splits; an Error for another name.
const Gsm8kSplit& gsm8k_split(std::string_view name);
inline constexpr const char* kGsm8kBaseUrl =
    "https://raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data";

struct Gsm8kFetchOptions {
  std::string base_url = kGsm8kBaseUrl;  // a mirror holding test.jsonl and train.jsonl (still sha256-checked)
  std::string cache = "";                // directory; "" = cache_dir() + "/gsm8k"
  HttpFetchOptions http = {};
};

// The path of an official split in the cache, downloading and verifying it by sha256 first when it
// is missing or differs. Offline: an Error that says to pass the file with --data / --train.
std::string fetch_gsm8k_split(std::string_view split, const Gsm8kFetchOptions& options = {});

}  // namespace kvgate
