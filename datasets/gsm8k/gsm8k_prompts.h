// GSM8K trials in three prompt styles:
//  gsm8k      lm-eval's `gsm8k` (completions): "Question: ...\nAnswer:", 5 worked solutions from the
//             train split as shots (drawn per problem with a fixed seed), stop ["Question:", "</s>",
//             "<|im_end|>"], 256 new tokens (lm-eval's API default), strict-match "#### N".
//  gsm8k-cot  lm-eval's `gsm8k-cot` format (completions): "Q: ...\nA: ... The answer is N.", 8 shots
//             built from train solutions (the same 8 for every problem, as lm-eval's fixed exemplars),
//             stop ["Q:", "</s>", "<|im_end|>"], strict-match "The answer is N".
//  chat       zero-shot chain of thought for chat models: the question and an instruction to put the
//             final answer after "####"; no stop strings (they cut chat answers that restate the question).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/trial.h"
#include "datasets/gsm8k/gsm8k_data.h"

namespace kvgate {

enum class Gsm8kStyle { lm_eval, cot, chat };
// "gsm8k" | "gsm8k-cot" | "chat"; an Error naming the choices otherwise.
Gsm8kStyle parse_gsm8k_style(std::string_view name);
const char* to_string(Gsm8kStyle style);
// The strict-match pattern of a style (flexible-extract is the same for all).
const char* gsm8k_strict_regex(Gsm8kStyle style);

// The instruction appended to the question in the chat style.
inline constexpr const char* kGsm8kChatInstruction =
    "Solve the problem step by step. Then put the final answer, a number only, on the last line after "
    "\"####\", like this: \"#### 42\".";

struct Gsm8kGenOptions {
  Gsm8kStyle style = Gsm8kStyle::lm_eval;
  std::uint64_t seed = 1;
  std::optional<std::size_t> limit{};     // a seeded random subset of the test problems
  std::optional<int> num_fewshot{};       // default: 5 (gsm8k), 8 (gsm8k-cot), 0 (chat; only 0 allowed)
  std::string system{};                   // chat only: a system message
  std::optional<int> max_tokens{};        // default: 256 for the completion styles (lm-eval), unset for chat
  std::string primary = "strict";       // which filter decides passed: "strict" | "flexible"
};

// One trial per chosen test problem, id "gsm8k/0042" (the problem's index in the test file), in
// index order. `train` supplies the shots (may be empty for chat).
std::vector<Trial> make_gsm8k_trials(const Gsm8kFile& test, const Gsm8kFile& train, const Gsm8kGenOptions& options);

// A train solution rewritten as a gsm8k-cot shot: calculator annotations <<...>> removed, lines joined
// into sentences, "The answer is N." at the end.
std::string gsm8k_cot_solution(const Gsm8kProblem& problem);

}  // namespace kvgate
