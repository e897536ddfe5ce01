#include "reports/trial_texts.h"

#include <filesystem>

#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/sha256.h"
#include "reports/html_escape.h"
#include "reports/run_facts.h"

namespace kvgate::reports {

using nlohmann::json;
namespace fs = std::filesystem;

const TrialText* TrialTexts::find(std::string_view id) const {
  const auto it = texts.find(id);
  return it == texts.end() ? nullptr : &it->second;
}

std::set<std::string> report_trial_ids(const compare::Comparison& c) {
  std::set<std::string> ids;
  for (const compare::PairComparison& p : c.pairs)
    for (const compare::TaskComparison& t : p.tasks) {
      for (const compare::FlipRef& f : t.lost) ids.insert(f.id);
      for (const compare::FlipRef& f : t.gained) ids.insert(f.id);
      for (const compare::Finding& fd : t.findings)
        for (const compare::FlipRef& f : fd.trials) ids.insert(f.id);
    }
  return ids;
}

std::string render_input(const json& input) {
  if (!input.is_object()) return scalar_text(input);
  if (const auto p = input.find("prompt"); p != input.end()) return scalar_text(*p);
  const auto msgs = input.find("messages");
  if (msgs == input.end() || !msgs->is_array()) return scalar_text(input);
  std::string out;
  for (const json& m : *msgs) {
    if (!out.empty()) out += "\n\n";
    out += (m.is_object() && m.contains("role") ? scalar_text(m["role"]) : std::string("?")) + ": ";
    const json content = m.is_object() && m.contains("content") ? m["content"] : json();
    if (content.is_array()) {  // content parts: keep the text ones
      for (const json& part : content)
        if (part.is_object() && part.contains("text")) out += scalar_text(part["text"]);
    } else if (!content.is_null()) {
      out += scalar_text(content);
    }
  }
  return out;
}

namespace {

// The tasks file of a run: the path as written (relative to the current directory), then relative
// to the run directory. Empty when neither exists.
std::string locate(const RunDir& run) {
  const std::string& p = run.manifest.tasks_path;
  if (p.empty()) return {};
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return p;
  const fs::path beside = fs::path(run.path) / p;
  if (!fs::path(p).is_absolute() && fs::is_regular_file(beside, ec)) return beside.string();
  return {};
}

TrialTexts read_texts(const std::string& path, const std::set<std::string>& ids, const TrialTextsOptions& o) {
  TrialTexts out;
  out.source = path;
  std::set<std::string, std::less<>> wanted(ids.begin(), ids.end());
  for_each_jsonl(path, [&](json&& line, std::size_t) {
    if (!line.is_object() || !line.contains("id") || !line["id"].is_string()) return;
    const auto it = wanted.find(line["id"].get_ref<const std::string&>());
    if (it == wanted.end()) return;
    TrialText t;
    t.prompt = truncate_middle(render_input(line.value("input", json())), o.prompt_head, o.prompt_tail);
    t.target = truncate_middle(line.contains("target") ? scalar_text(line["target"]) : std::string(), o.target_chars, 0);
    out.texts.emplace(*it, std::move(t));
  });
  return out;
}

}  // namespace

TrialTexts load_trial_texts(const std::vector<const RunDir*>& runs, const std::set<std::string>& ids, const TrialTextsOptions& o) {
  TrialTexts none;
  if (!o.tasks_path.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(o.tasks_path, ec))
      throw Error("--tasks " + o.tasks_path + ": no such file: name the tasks file the runs were made from, or drop --tasks");
    const std::string sha = sha256_file(o.tasks_path);
    for (const RunDir* r : runs)
      if (!r->manifest.tasks_sha256.empty() && r->manifest.tasks_sha256 != sha)
        throw Error("--tasks " + o.tasks_path + ": sha256 " + sha + " differs from the " + r->manifest.tasks_sha256 + " that " +
                    r->path + "/run.json recorded: name the tasks file that run was made from");
    return ids.empty() ? TrialTexts{.source = o.tasks_path} : read_texts(o.tasks_path, ids, o);
  }
  for (const RunDir* r : runs) {
    const std::string path = locate(*r);
    if (path.empty()) continue;
    const std::string sha = sha256_file(path);
    if (!r->manifest.tasks_sha256.empty() && r->manifest.tasks_sha256 != sha) {
      none.note = "the tasks file " + path + " has changed since " + (r->manifest.label.empty() ? r->path : r->manifest.label) +
                  " ran (sha256 " + sha.substr(0, 12) + "…, recorded " + r->manifest.tasks_sha256.substr(0, 12) +
                  "…); pass --tasks with the original file";
      return none;
    }
    return ids.empty() ? TrialTexts{.source = path} : read_texts(path, ids, o);
  }
  bool named = false;
  for (const RunDir* r : runs) named = named || !r->manifest.tasks_path.empty();
  none.note = named ? "the tasks file named in run.json (tasks_path) is not found from here; pass --tasks FILE"
                    : "run.json names no tasks file; pass --tasks FILE";
  return none;
}

TrialTexts load_trial_texts(const compare::Comparison& c, const TrialTextsOptions& o) {
  std::vector<const RunDir*> runs;
  for (const compare::RunInfo& r : c.runs)
    if (r.run) runs.push_back(r.run.get());
  return load_trial_texts(runs, report_trial_ids(c), o);
}

}  // namespace kvgate::reports
