// A trial: one fully rendered input with its target and grader, as written to a tasks file
// (product.md "Files"). Generators make trials; backends answer them; graders score the answers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate {

struct Trial {
  std::string id;             // unique and stable, e.g. "multicode/32768/0007"
  std::string task;           // "niah", "multicode", "mrcr", "gsm8k", "golden", "custom", ...
  std::int64_t bucket = 0;    // target length in tokens for long-context tasks, 0 where there is none
  // {"messages": [...]} (chat) or {"prompt": "..."} (completions). Optional generation hints that
  // travel with the input: "stop" (array of strings), "max_tokens", "tools", "response_format".
  nlohmann::json input;
  nlohmann::json target;      // a string, or a task-specific value the grader understands
  nlohmann::json grader;      // {"name": "...", ...parameters}
  nlohmann::json meta = nlohmann::json::object();  // seed, depths, measured prompt tokens, ...

  bool is_chat() const { return input.contains("messages"); }
  const std::string& grader_name() const { return grader.at("name").get_ref<const std::string&>(); }
};

nlohmann::json to_json(const Trial& trial);
// Validates every field; errors name `where` (e.g. "tasks.jsonl:17") and the field.
Trial trial_from_json(const nlohmann::json& j, const std::string& where);

struct TasksFile {
  std::string path;
  std::string sha256;  // of the file's bytes: baseline and candidate must see the same trials
  std::vector<Trial> trials;
};

// Reads and validates a tasks file; ids must be unique.
TasksFile load_tasks(const std::string& path);
// Writes a tasks file atomically (never half-written); ids must be unique.
void write_tasks(const std::string& path, const std::vector<Trial>& trials);

}  // namespace kvgate
