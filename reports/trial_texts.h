// The prompts and targets behind result ids, for the drill-down of lost trials. They live in the
// tasks file (results carry only the answers): the one named by --tasks, else run.json's tasks_path
// (as written, then relative to the run directory). Read only for the ids a report shows, and only
// when the file's sha256 is the one the run recorded: otherwise the prompts would be another file's.
// Without the file a report still renders, saying why the prompts are missing.
#pragma once
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"

namespace kvgate::reports {

struct TrialText {
  std::string prompt{};  // the rendered input, middle cut (truncate_middle), cleaned
  std::string target{};
};

struct TrialTexts {
  std::string source{};  // the tasks file read ("" when none)
  std::string note{};    // why prompts are missing, or "" when they are here
  std::map<std::string, TrialText, std::less<>> texts{};
  const TrialText* find(std::string_view id) const;
};

struct TrialTextsOptions {
  std::string tasks_path{};  // --tasks: this file (an Error when it cannot be read or its sha256 differs)
  std::size_t prompt_head = 360, prompt_tail = 360;  // code points kept at each end of a prompt
  std::size_t target_chars = 240;
};

// The ids a report of `c` shows in full: lost and gained results and the trials of findings.
std::set<std::string> report_trial_ids(const compare::Comparison& c);

// Texts of `ids` from the tasks file of `runs` (the first run whose file is found; its sha256 is
// checked against the one that run recorded).
TrialTexts load_trial_texts(const std::vector<const RunDir*>& runs, const std::set<std::string>& ids, const TrialTextsOptions& o);
TrialTexts load_trial_texts(const compare::Comparison& c, const TrialTextsOptions& o);

// A trial's input as one text: "role: content" per chat message, or the completion prompt.
std::string render_input(const nlohmann::json& input);

}  // namespace kvgate::reports
