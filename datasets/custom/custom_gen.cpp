#include "datasets/custom/custom_gen.h"

#include <cstdio>
#include <unordered_map>

#include "datasets/common/chat_messages.h"
#include "datasets/common/subset.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "harness/core/rng.h"
#include "harness/core/sha256.h"
#include "datasets/custom/answer_extract.h"
#include "datasets/custom/grader_params.h"
#include "datasets/custom/template.h"
#include "datasets/graders.h"

namespace kvgate {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

[[noreturn]] void missing(const CustomRow& row, const std::string& field, const char* flag) {
  std::string have;
  for (const auto& item : row.value.items()) have += (have.empty() ? "" : ", ") + item.key();
  throw Error(row.where + ": field \"" + field + "\" missing (" + flag + "); this line has: " + (have.empty() ? "no fields" : have));
}

void check_target(const CustomRow& row, const std::string& field, const json& target, const CustomGenOptions& o) {
  const std::string at = row.where + ": field \"" + field + "\" (--target-field)";
  if (target.is_null()) throw Error(at + " is null: every row needs a target");
  if (o.grader == "json_field") return;  // any JSON value
  if (o.grader == "choice") {
    const std::string choices = o.grader_params.value("choices", "ABCDEFGHIJ");
    const auto letter = target.is_string() ? normalize_choice_target(target.get<std::string>()) : std::nullopt;
    if (!letter || choices.find(*letter) == std::string::npos)
      throw Error(at + " is " + describe_json_value(target) + ", not one of the option letters " + choices +
                  " (the choice grader needs a letter)");
    return;
  }
  auto scalar = [](const json& v) { return v.is_string() || v.is_number(); };
  bool ok = scalar(target);
  if (target.is_array()) {
    ok = !target.empty();
    for (const json& v : target) ok = ok && scalar(v);
  }
  if (!ok)
    throw Error(at + " is " + describe_json_value(target) + ": the " + o.grader +
                " grader needs a string, a number, or an array of acceptable answers");
}

json chat_messages(const CustomRow& row, const json& input, const std::string& field, const std::string& system) {
  json messages = json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  if (input.is_array() && !input.empty() && input[0].is_object()) {  // the field already holds chat messages
    check_chat_messages(input, row.where, field);
    for (const json& m : input) messages.push_back(m);
    return messages;
  }
  messages.push_back({{"role", "user"}, {"content", field_text(input, row.where, field)}});
  return messages;
}

}  // namespace

std::vector<CustomRow> read_custom_rows(const std::string& path) {
  std::vector<CustomRow> rows;
  for_each_jsonl(path, [&](json&& v, std::size_t line) {
    const std::string where = path + ":" + std::to_string(line);
    if (!v.is_object()) throw Error(where + ": not a JSON object (" + describe_json_value(v) + "): one row per line, {\"field\": ...}");
    rows.push_back({std::move(v), where, line});
  });
  if (rows.empty()) throw Error(path + ": no rows (the file is empty)");
  return rows;
}

CustomRows read_custom_hf_rows(const HfRowsSource& source, const HfRowsOptions& options) {
  CustomRows out;
  std::string text;
  const std::string name = source.dataset + "/" + source.config + "/" + source.split;
  for_each_hf_row(source, options, [&](const json& row, std::int64_t idx) {
    const std::string where = name + " row " + std::to_string(idx);
    if (!row.is_object()) throw Error(where + ": not a JSON object (" + describe_json_value(row) + "): is this a rows API?");
    text += row.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    out.rows.push_back({row, where, static_cast<std::size_t>(idx) + 1});
    return true;
  });
  if (out.rows.empty()) throw Error(name + ": the split has no rows: check the dataset, config and split");
  out.sha256 = sha256_hex(text);
  return out;
}

std::vector<Trial> make_custom_trials(const std::vector<CustomRow>& rows, const std::string& source_sha256, const CustomGenOptions& o) {
  if (o.name.empty() || o.name.find_first_of("/ \t\n") != std::string::npos)
    throw Error("--name \"" + o.name + "\": a task name is one word without '/' or spaces (e.g. aime25)");
  if (o.target_field.empty()) throw Error("--target-field: name the field that holds the answer");
  if (o.input_field.empty() && o.prompt_template.empty())
    throw Error("--input-field: name the field that holds the prompt (or give --template)");
  if (!o.system.empty() && !o.chat) throw Error("--system: only chat prompts have a system message (drop --format completions)");
  if (o.max_tokens && *o.max_tokens <= 0) throw Error("--max-tokens: must be a positive number of tokens");
  if (o.limit && *o.limit == 0) throw Error("--limit 0: ask for at least one row");
  if (!find_grader(o.grader)) {
    std::string known;
    for (const GraderInfo& g : graders()) known += (known.empty() ? "" : ", ") + std::string(g.name);
    throw Error("--grader " + o.grader + ": unknown grader (known: " + known + ")");
  }
  if (!o.grader_params.is_object() || o.grader_params.contains("name"))
    throw Error("--grader-params: must be a JSON object of parameters (without \"name\"), e.g. {\"tolerance\": 0.01}");
  json grader = o.grader_params;
  grader["name"] = o.grader;
  check_grader_params(grader, "--grader-params");
  std::optional<PromptTemplate> tmpl;
  if (!o.prompt_template.empty()) tmpl.emplace(o.prompt_template);

  const std::vector<std::size_t> chosen = seeded_subset(rows.size(), o.limit.value_or(rows.size()), o.seed, o.name + "/limit");
  std::vector<Trial> trials;
  std::unordered_map<std::string, std::string> seen;  // id -> where
  for (std::size_t index : chosen) {
    const CustomRow& row = rows[index];
    const json& r = row.value;
    std::string prompt_text;
    json input;
    if (tmpl) {
      prompt_text = tmpl->render(r, row.where);
      input = o.chat ? json{{"messages", chat_messages(row, prompt_text, "--template", o.system)}} : json{{"prompt", prompt_text}};
    } else {
      auto it = r.find(o.input_field);
      if (it == r.end() || it->is_null()) missing(row, o.input_field, "--input-field");
      if (o.chat) input = {{"messages", chat_messages(row, *it, o.input_field, o.system)}};
      else input = {{"prompt", field_text(*it, row.where, o.input_field)}};
    }
    if (o.max_tokens) input["max_tokens"] = *o.max_tokens;

    auto target = r.find(o.target_field);
    if (target == r.end()) missing(row, o.target_field, "--target-field");
    check_target(row, o.target_field, *target, o);

    std::string id;
    if (!o.id_field.empty()) {
      auto idv = r.find(o.id_field);
      if (idv == r.end()) missing(row, o.id_field, "--id-field");
      if (idv->is_string() && !idv->get_ref<const std::string&>().empty()) id = idv->get<std::string>();
      else if (idv->is_number_integer()) id = idv->dump();
      else throw Error(row.where + ": field \"" + o.id_field + "\" (--id-field) must be a non-empty string or an integer, got " +
                       describe_json_value(*idv));
    } else {
      // Stable across runs, machines and row order: a hash of what the model is asked.
      id = hex64(hash64(input.dump(-1, ' ', false, json::error_handler_t::replace))).substr(0, 12);
    }
    Trial t;
    t.id = o.name + "/" + id;
    t.task = o.name;
    t.bucket = 0;
    t.input = std::move(input);
    t.target = *target;
    t.grader = grader;
    t.meta = {{"source_line", row.line}, {"source_index", index}, {"id_from", o.id_field.empty() ? "hash" : "field"},
              {"data_sha256", source_sha256}, {"version", kVersion}};
    if (o.limit) t.meta["subset"] = {{"limit", *o.limit}, {"of", rows.size()}, {"seed", o.seed}};
    t = trial_from_json(to_json(t), row.where);  // the checks every tasks file gets (messages, roles)
    auto [it, fresh] = seen.emplace(t.id, row.where);
    if (!fresh)
      throw Error(row.where + ": id \"" + t.id + "\" repeats " + it->second +
                  (o.id_field.empty() ? ": the same input twice; remove one or give --id-field" : ": ids must be unique"));
    trials.push_back(std::move(t));
  }
  return trials;
}

}  // namespace kvgate
