#include "graders.h"

#include "core/error.h"
#include "custom/custom_graders.h"
#include "multicode/multicode.h"
#include "niah/niah.h"

namespace kvgate {

const std::vector<GraderInfo>& graders() {
  // One line per grader, sorted by name.
  static const std::vector<GraderInfo> table = {
      {"contains", grade_contains, "the target occurs in the response (case-insensitive by default)"},
      {"exact", grade_exact, "the response equals the target, whitespace collapsed (case-insensitive by default)"},
      {"multicode", multicode::grade_multicode, "every asked access code exact and given for its own name; fraction right in details"},
      {"niah", niah::grade_niah, "the needle's value in the answer as a whole token; RULER substring score in details"},
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
