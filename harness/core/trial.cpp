#include "harness/core/trial.h"

#include <unordered_map>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "harness/core/sha256.h"

namespace kvgate {

using nlohmann::json;

json to_json(const Trial& t) {
  return json{{"id", t.id},         {"task", t.task},     {"bucket", t.bucket}, {"input", t.input},
              {"target", t.target}, {"grader", t.grader}, {"meta", t.meta}};
}

static void validate_input(const FieldReader& f, const json& input) {
  const bool chat = input.contains("messages"), completion = input.contains("prompt");
  if (chat == completion)
    f.fail("input", "must hold exactly one of \"messages\" (chat) or \"prompt\" (completions)");
  if (completion && !input["prompt"].is_string()) f.fail("input", "\"prompt\" must be a string");
  if (chat) {
    const json& msgs = input["messages"];
    if (!msgs.is_array() || msgs.empty()) f.fail("input", "\"messages\" must be a non-empty array");
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      const json& m = msgs[i];
      const std::string at = "\"messages\"[" + std::to_string(i) + "]";
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
        f.fail("input", at + " must be an object with a string \"role\"");
      if (m.contains("content") && !(m["content"].is_string() || m["content"].is_array() || m["content"].is_null()))
        f.fail("input", at + ".content must be a string, an array of parts or null");
    }
  }
  if (input.contains("stop")) {
    const json& s = input["stop"];
    bool ok = s.is_array();
    if (ok)
      for (const json& x : s) ok = ok && x.is_string();
    if (!ok) f.fail("input", "\"stop\" must be an array of strings");
  }
  if (input.contains("max_tokens") && !(input["max_tokens"].is_number_integer() && input["max_tokens"].get<long long>() > 0))
    f.fail("input", "\"max_tokens\" must be a positive integer");
}

Trial trial_from_json(const json& j, const std::string& where) {
  FieldReader f(j, where);
  Trial t;
  t.id = f.str("id");
  if (t.id.empty()) f.fail("id", "must not be empty");
  t.task = f.str("task");
  if (t.task.empty()) f.fail("task", "must not be empty");
  t.bucket = f.integer("bucket");
  if (t.bucket < 0) f.fail("bucket", "must be >= 0");
  t.input = f.object("input");
  validate_input(f, t.input);
  t.target = f.any("target");
  t.grader = f.object("grader");
  FieldReader(t.grader, where + ": field \"grader\"").str("name");
  if (f.has("meta")) t.meta = f.object("meta");
  return t;
}

static void check_unique(const std::vector<Trial>& trials, const std::string& path,
                         const std::vector<std::size_t>* lines) {
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    auto [it, fresh] = seen.emplace(trials[i].id, i);
    if (!fresh) {
      auto line = [&](std::size_t k) { return lines ? (*lines)[k] : k + 1; };
      throw Error(path + ":" + std::to_string(line(i)) + ": id \"" + trials[i].id + "\" repeats line " +
                  std::to_string(line(it->second)) + ": trial ids must be unique");
    }
  }
}

TasksFile load_tasks(const std::string& path) {
  TasksFile file;
  file.path = path;
  std::vector<std::size_t> lines;
  for_each_jsonl(path, [&](json&& v, std::size_t line) {
    file.trials.push_back(trial_from_json(v, path + ":" + std::to_string(line)));
    lines.push_back(line);
  });
  if (file.trials.empty()) throw Error(path + ": no trials: generate some with `kvgate gen`");
  check_unique(file.trials, path, &lines);
  file.sha256 = sha256_file(path);
  return file;
}

void write_tasks(const std::string& path, const std::vector<Trial>& trials) {
  check_unique(trials, path, nullptr);
  std::string text;
  for (const Trial& t : trials) text += to_jsonl_line(to_json(t));
  write_file_atomic(path, text);
}

}  // namespace kvgate
