// A suite: which tasks `kvgate gate` runs, with their generator options, length buckets, repeats and
// sampling, which of them gate and at what margin, and the error-rate limit. Written as YAML or JSON
// (docs/suites.md); quick, ship and nightly are built in (harness/gate/suites/*.yaml, embedded).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/compare/options.h"
#include "harness/core/sampling.h"

namespace kvgate::gate {

// The length buckets of a long-context task: a list, or a doubling ladder from `from` up to `to`
// (0: the model's maximum context, read from the server or the checkpoint).
struct LengthSpec {
  std::vector<std::int64_t> list{};
  std::int64_t from = 0, to = 0;
  bool ladder() const { return list.empty(); }
};

struct TaskSpec {
  std::string task{};          // niah | multicode | mrcr | gsm8k | golden
  std::string where{};         // "suite.yaml:12: tasks[0]" for messages
  std::optional<LengthSpec> lengths{};  // long-context tasks only
  int per_bucket = 0;          // long-context tasks: trials per bucket
  int repeats = 1;
  SamplingParams sampling{};
  bool gate = true;            // false: compared and reported, never decides the verdict
  std::optional<double> margin{};  // this task's margin (default: the suite's)
  bool optional = false;       // golden: skipped (with a note) when no prompts are given
  nlohmann::json options = nlohmann::json::object();  // the generator's own options (validated)
};

struct Suite {
  std::string name{}, description{};
  std::string source{};  // "built-in" or the file's path
  std::uint64_t seed = 1;
  compare::CompareOptions compare{};  // margin, alpha, max_error_rate, auc_axis, errors
  bool history = false;  // append each gate to a history (--history FILE)
  std::vector<TaskSpec> tasks{};
  nlohmann::json document{};  // the suite as JSON, as read (recorded in DIR/gate.json)
};

// Source positions of a document's values, by JSON pointer ("/tasks/0/per_bucket" -> line 12).
using LineMap = std::map<std::string, int>;

// Parses and validates a suite document. Errors name the file, the line when known, the key and
// the fix: unknown keys (a typo must not silently run a default), wrong types, out-of-range values,
// a task named twice, generator options the task does not take.
Suite parse_suite(const nlohmann::json& doc, const std::string& source, const LineMap& lines = {});

// A built-in suite's name, or a .yaml/.yml/.json file. An Error names the suite and lists the
// built-in ones when neither.
Suite load_suite(const std::string& name_or_path);

// The built-in suites: name -> YAML text (embedded at build time).
const std::map<std::string, std::string>& builtin_suites();

// YAML text -> JSON (plain scalars typed as YAML 1.2 core: null, bool, int, float; quoted scalars
// stay strings), with the line of every value. Errors name `source` and the line.
nlohmann::json yaml_to_json(const std::string& text, const std::string& source, LineMap* lines = nullptr);

}  // namespace kvgate::gate
