#include "datasets/gsm8k/gsm8k_prompts.h"

#include <algorithm>

#include "datasets/common/subset.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "datasets/gsm8k/gsm8k_extract.h"

namespace kvgate {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;  // bump when a prompt, shot choice or grader parameter changes

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

// k distinct indices of [0, n) from `rng`, in the order drawn (partial Fisher-Yates).
std::vector<std::size_t> draw(Rng& rng, std::size_t n, std::size_t k) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  for (std::size_t i = 0; i < k; ++i) std::swap(all[i], all[i + rng.below(n - i)]);
  all.resize(k);
  return all;
}

std::string id_for(std::size_t index, std::size_t count) {
  std::string digits = std::to_string(index);
  const std::size_t width = std::max<std::size_t>(4, std::to_string(count ? count - 1 : 0).size());
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return "gsm8k/" + digits;
}

}  // namespace

Gsm8kStyle parse_gsm8k_style(std::string_view name) {
  if (name == "gsm8k") return Gsm8kStyle::lm_eval;
  if (name == "gsm8k-cot") return Gsm8kStyle::cot;
  if (name == "chat") return Gsm8kStyle::chat;
  throw Error("--style " + std::string(name) + ": unknown GSM8K prompt style (known: gsm8k, gsm8k-cot, chat)");
}

const char* to_string(Gsm8kStyle s) {
  switch (s) {
    case Gsm8kStyle::lm_eval: return "gsm8k";
    case Gsm8kStyle::cot: return "gsm8k-cot";
    case Gsm8kStyle::chat: return "chat";
  }
  return "gsm8k";
}

const char* gsm8k_strict_regex(Gsm8kStyle s) { return s == Gsm8kStyle::cot ? kGsm8kCotStrictRegex : kGsm8kStrictRegex; }

std::string gsm8k_cot_solution(const Gsm8kProblem& p) {
  std::string body = p.answer.substr(0, p.answer.rfind("####"));
  // Calculator annotations: "2*3=<<2*3=6>>6" -> "2*3=6".
  for (std::size_t open; (open = body.find("<<")) != std::string::npos;) {
    const std::size_t close = body.find(">>", open);
    if (close == std::string::npos) break;
    body.erase(open, close + 2 - open);
  }
  std::string out;
  std::size_t pos = 0;
  while (pos <= body.size()) {
    std::size_t nl = body.find('\n', pos);
    std::string line = trim(body.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (!line.empty()) {
      if (line.back() != '.' && line.back() != '!' && line.back() != '?') line.push_back('.');
      out += (out.empty() ? "" : " ") + line;
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out + (out.empty() ? "" : " ") + "The answer is " + p.final_answer + ".";
}

std::vector<Trial> make_gsm8k_trials(const Gsm8kFile& test, const Gsm8kFile& train, const Gsm8kGenOptions& o) {
  const int shots = o.num_fewshot.value_or(o.style == Gsm8kStyle::lm_eval ? 5 : o.style == Gsm8kStyle::cot ? 8 : 0);
  if (shots < 0) throw Error("--num-fewshot " + std::to_string(shots) + ": must be 0 or more");
  if (o.style == Gsm8kStyle::chat && shots != 0)
    throw Error("--num-fewshot " + std::to_string(shots) + ": the chat style is zero-shot; use --style gsm8k or gsm8k-cot for shots");
  if (o.style != Gsm8kStyle::chat && !o.system.empty())
    throw Error("--system: only the chat style has a system message (this style sends a completions prompt)");
  if (static_cast<std::size_t>(shots) > train.problems.size())
    throw Error("--num-fewshot " + std::to_string(shots) + ": the train file " + train.path + " has only " +
                std::to_string(train.problems.size()) + " problems");
  if (o.primary != "strict" && o.primary != "flexible")
    throw Error("--primary " + o.primary + ": must be strict or flexible");
  if (o.max_tokens && *o.max_tokens <= 0) throw Error("--max-tokens: must be a positive number of tokens");
  if (o.limit && *o.limit == 0) throw Error("--limit 0: ask for at least one problem");

  const std::size_t n = test.problems.size();
  const std::vector<std::size_t> chosen = o.limit ? seeded_subset(n, *o.limit, o.seed, "gsm8k/limit")
                                                  : seeded_subset(n, n, o.seed, "gsm8k/limit");
  // gsm8k-cot: one fixed set of exemplars for every problem, as lm-eval's `first_n` sampler gives.
  std::vector<std::size_t> cot_shots;
  if (o.style == Gsm8kStyle::cot) {
    Rng rng(derive_seed(o.seed, "gsm8k-cot/fewshot"));
    cot_shots = draw(rng, train.problems.size(), static_cast<std::size_t>(shots));
  }
  const int max_tokens = o.max_tokens.value_or(256);
  json grader = {{"name", "gsm8k"},
                 {"strict_regex", gsm8k_strict_regex(o.style)},
                 {"flexible_regex", kGsm8kFlexibleRegex},
                 {"primary", o.primary}};

  std::vector<Trial> trials;
  trials.reserve(chosen.size());
  for (std::size_t index : chosen) {
    const Gsm8kProblem& p = test.problems[index];
    Trial t;
    t.id = id_for(index, n);
    t.task = "gsm8k";
    t.bucket = 0;
    t.target = p.answer;
    t.grader = grader;
    std::vector<std::size_t> shot_ids;
    switch (o.style) {
      case Gsm8kStyle::lm_eval: {
        // lm-eval draws shots per document; here per trial id, so a subset never changes a prompt.
        Rng rng(derive_seed(o.seed, "gsm8k/fewshot/" + t.id));
        shot_ids = draw(rng, train.problems.size(), static_cast<std::size_t>(shots));
        std::string prompt;
        for (std::size_t s : shot_ids)
          prompt += "Question: " + train.problems[s].question + "\nAnswer: " + train.problems[s].answer + "\n\n";
        prompt += "Question: " + p.question + "\nAnswer:";
        t.input = {{"prompt", prompt}, {"stop", {"Question:", "</s>", "<|im_end|>"}}, {"max_tokens", max_tokens}};
        break;
      }
      case Gsm8kStyle::cot: {
        shot_ids = cot_shots;
        std::string prompt;
        for (std::size_t s : shot_ids)
          prompt += "Q: " + train.problems[s].question + "\nA: " + gsm8k_cot_solution(train.problems[s]) + "\n\n";
        prompt += "Q: " + p.question + "\nA:";
        t.input = {{"prompt", prompt}, {"stop", {"Q:", "</s>", "<|im_end|>"}}, {"max_tokens", max_tokens}};
        break;
      }
      case Gsm8kStyle::chat: {
        json messages = json::array();
        if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
        messages.push_back({{"role", "user"}, {"content", p.question + "\n\n" + kGsm8kChatInstruction}});
        t.input = {{"messages", messages}};
        if (o.max_tokens) t.input["max_tokens"] = *o.max_tokens;
        break;
      }
    }
    t.meta = {{"dataset_index", index},
              {"style", to_string(o.style)},
              {"version", kVersion},
              {"seed", o.seed},
              {"num_fewshot", shots},
              {"fewshot_train_indices", shot_ids},
              {"final_answer", p.final_answer},
              {"data_sha256", test.sha256}};
    if (o.limit) t.meta["subset"] = {{"limit", *o.limit}, {"of", n}};
    trials.push_back(std::move(t));
  }
  return trials;
}

}  // namespace kvgate
