#include "datasets/graders.h"

#include "harness/core/error.h"
#include "datasets/custom/custom_graders.h"
#include "datasets/multicode/multicode.h"
#include "datasets/niah/niah.h"
#include "datasets/golden/golden_grader.h"
#include "datasets/gsm8k/gsm8k_grader.h"
#include "datasets/mrcr/mrcr_grader.h"

namespace kvgate {

const std::vector<GraderInfo>& graders() {
  // One line per grader, sorted by name.
  static const std::vector<GraderInfo> table = {
      {"choice", grade_choice, "multiple choice: the option letter (A-J) read from the response equals the target"},
      {"contains", grade_contains, "the target occurs in the response (case-insensitive by default)"},
      {"exact", grade_exact, "the response equals the target, whitespace collapsed (case-insensitive by default)"},
      {"golden", grade_golden, "structural self-check: not empty, not truncated, valid JSON when requested, tool calls that parse"},
      {"gsm8k", grade_gsm8k, "lm-eval GSM8K: strict-match (default) or flexible-extract, exact_match; numeric equality in details"},
      {"json_field", grade_json_field, "the response is JSON and the named field equals the target"},
      {"mrcr", grade_mrcr, "official MRCR: 0 unless the response starts with the prefix, else the difflib ratio"},
      {"multicode", multicode::grade_multicode, "every asked access code exact and given for its own name; fraction right in details"},
      {"niah", niah::grade_niah, "the needle's value in the answer as a whole token; RULER substring score in details"},
      {"numeric", grade_numeric, "the answer number (boxed, ####, answer is, last number) equals the target within tolerance"},
      {"regex", grade_regex, "a user regex extracts the answer, then exact match"},
  };
  return table;
}

GraderFn find_grader(std::string_view name) {
  for (const GraderInfo& g : graders())
    if (name == g.name) return g.fn;
  return nullptr;
}

Grade grade_trial(const GradeInput& input) {
  const std::string& name = input.trial.grader_name();
  GraderFn fn = find_grader(name);
  if (!fn) {
    std::string known;
    for (const GraderInfo& g : graders()) known += (known.empty() ? "" : ", ") + std::string(g.name);
    throw Error("trial " + input.trial.id + ": unknown grader \"" + name + "\" (known: " +
                (known.empty() ? "none" : known) + "): regenerate the tasks file with this kvgate version");
  }
  return fn(input);
}

}  // namespace kvgate
