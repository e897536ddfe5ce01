#include "datasets/gsm8k/gsm8k_data.h"

#include <filesystem>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "harness/core/log.h"
#include "harness/core/sha256.h"

namespace kvgate {

namespace {

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

constexpr Gsm8kSplit kSplits[] = {
    {"test", "test.jsonl", "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14", 1319},
    {"train", "train.jsonl", "17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465", 7473},
};

}  // namespace

std::string gsm8k_final_answer(std::string_view answer) {
  const std::size_t at = answer.rfind("####");
  if (at == std::string_view::npos) return "";
  return trim(answer.substr(at + 4));
}

Gsm8kFile load_gsm8k(const std::string& path) {
  Gsm8kFile file;
  file.path = path;
  for_each_jsonl(path, [&](nlohmann::json&& v, std::size_t line) {
    const std::string where = path + ":" + std::to_string(line);
    if (!v.is_object())
      throw Error(where + ": not a JSON object (" + describe_json_value(v) +
                  "): a GSM8K line is {\"question\": ..., \"answer\": \"... #### N\"}");
    FieldReader f(v, where);
    Gsm8kProblem p;
    p.index = file.problems.size();
    p.line = line;
    p.question = f.str("question");
    p.answer = f.str("answer");
    if (trim(p.question).empty()) f.fail("question", "is empty");
    p.final_answer = gsm8k_final_answer(p.answer);
    if (p.final_answer.empty())
      f.fail("answer", "has no final answer after \"####\" (GSM8K answers end \"#### N\"): is this a GSM8K file?");
    file.problems.push_back(std::move(p));
  });
  if (file.problems.empty()) throw Error(path + ": no problems (the file is empty): pass a GSM8K JSONL file");
  file.sha256 = sha256_file(path);
  return file;
}

const Gsm8kSplit& gsm8k_split(std::string_view name) {
  for (const Gsm8kSplit& s : kSplits)
    if (name == s.name) return s;
  throw Error("gsm8k: unknown split \"" + std::string(name) + "\" (known: test, train)");
}

std::string fetch_gsm8k_split(std::string_view split_name, const Gsm8kFetchOptions& o) {
  const Gsm8kSplit& split = gsm8k_split(split_name);
  const std::string dir = o.cache.empty() ? cache_dir() + "/gsm8k" : o.cache;
  make_directories(dir);
  const std::string path = dir + "/" + split.file;
  if (std::filesystem::exists(path)) {
    if (sha256_file(path) == split.sha256) return path;
    log_warn(path + ": sha256 differs from the official " + split.name + " split; downloading it again");
  }
  std::string base = o.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string url = base + "/" + split.file;
  log_info("gsm8k: downloading the " + std::string(split.name) + " split from " + url);
  try {
    download_file(url, path, std::string(split.sha256), o.http);
  } catch (const Error& e) {
    throw Error("gsm8k: cannot get the " + std::string(split.name) + " split: " + e.what() +
                "\nOffline? Pass the file yourself: --" + (split.name == std::string_view("test") ? "data" : "train") +
                " PATH/" + split.file + " (grade_school_math/data/" + split.file +
                " of github.com/openai/grade-school-math), or copy it to " + path);
  }
  return path;
}

}  // namespace kvgate
