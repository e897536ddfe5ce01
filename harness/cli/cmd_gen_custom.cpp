// kvgate gen custom: any JSONL benchmark with a standard grader (datasets/custom).
#include <memory>
#include <optional>

#include "datasets/common/hf_rows.h"
#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/sha256.h"
#include "harness/core/trial.h"
#include "datasets/custom/custom_gen.h"
#include "harness/cli/gen_common.h"

namespace kvgate::cli {

namespace {

struct CustomCliOptions {
  GenCommonOptions common;
  std::string data, grader_params = "{}", format = "chat";
  std::optional<int> max_tokens;
  std::optional<std::size_t> limit;
  bool refresh = false, offline = false;  // a rows API URL's cache
  CustomGenOptions gen;
};

int run(CustomCliOptions& o) {
  if (o.format != "chat" && o.format != "completions") throw Error("--format " + o.format + ": must be chat or completions");
  CustomGenOptions g = o.gen;
  g.chat = o.format == "chat";
  g.max_tokens = o.max_tokens;
  g.limit = o.limit;
  g.seed = o.common.seed;
  g.grader_params = nlohmann::json::parse(o.grader_params, nullptr, false);
  if (g.grader_params.is_discarded()) throw Error("--grader-params " + o.grader_params + ": not valid JSON (e.g. '{\"tolerance\": 0.01}')");
  CustomRows data;
  if (is_http_url(o.data)) {
    const HfRowsUrl url = parse_hf_rows_url(o.data);
    HfRowsOptions ho;
    if (url.page_length > 0) ho.page_length = url.page_length;
    ho.refresh = o.refresh;
    ho.offline = o.offline;
    data = read_custom_hf_rows(url.source, ho);
  } else {
    if (o.refresh || o.offline) throw Error("--refresh and --offline apply to a rows API URL in --data, not to a file");
    data.rows = read_custom_rows(o.data);
    data.sha256 = sha256_file(o.data);
  }
  const std::vector<Trial> trials = make_custom_trials(data.rows, data.sha256, g);
  write_tasks(o.common.out, trials);
  log_info(g.name + ": wrote " + std::to_string(trials.size()) + " trials (grader " + g.grader + ") to " + o.common.out);
  return 0;
}

}  // namespace

void register_gen_custom(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<CustomCliOptions>();
  CLI::App* sub = gen.add_subcommand("custom", "Any JSONL benchmark with a standard grader (exact, regex, numeric, choice, contains, json_field)");
  add_gen_common_options(sub, o->common, "");
  sub->add_option("--data", o->data,
                  "JSONL file, one row (a JSON object) per line, or a Hugging Face rows API URL "
                  "(https://datasets-server.huggingface.co/rows?dataset=ORG/NAME&config=C&split=S: the whole split, "
                  "cached under the kvgate cache; $HF_TOKEN for gated sets)")
      ->required();
  sub->add_option("--input-field", o->gen.input_field, "Field holding the prompt (a string, or an array of chat messages)");
  sub->add_option("--target-field", o->gen.target_field, "Field holding the answer (a string, number, or array of acceptable answers)")
      ->required();
  sub->add_option("--id-field", o->gen.id_field, "Field holding a unique id (default: a stable hash of the rendered input)");
  sub->add_option("--template", o->gen.prompt_template,
                  "Prompt built from fields: \"{question}\\n\\n{options}\" ({{ and }} for literal braces; an array field lists "
                  "lettered options)");
  sub->add_option("--system", o->gen.system, "System message (chat)");
  sub->add_option("--format", o->format, "chat (messages) or completions (prompt)")->capture_default_str();
  sub->add_option("--grader", o->gen.grader, "Grader: exact, contains, regex, numeric, choice, json_field (or any registered one)")
      ->capture_default_str();
  sub->add_option("--grader-params", o->grader_params,
                  "Grader parameters as a JSON object, e.g. '{\"tolerance\": 0.01}' or '{\"pattern\": \"ANSWER: (\\\\w+)\"}'")
      ->capture_default_str();
  sub->add_option("--name", o->gen.name, "Task name (ids are NAME/ID; compare reports per task)")->capture_default_str();
  sub->add_option("--max-tokens", o->max_tokens, "New-token limit written into each trial (default: the run's --max-tokens)");
  sub->add_option("--limit", o->limit, "A seeded random subset of N rows")->check(CLI::PositiveNumber);
  sub->add_flag("--refresh", o->refresh, "With a rows API URL: drop the cached rows and fetch again");
  sub->add_flag("--offline", o->offline, "With a rows API URL: use only cached rows");
  commands.add(sub, [o] { return run(*o); });
}

}  // namespace kvgate::cli
