#include "datasets/haystack/haystack_input.h"

#include "datasets/common/length_fit.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "datasets/haystack/haystack_fine_step.h"
#include "datasets/haystack/prose_generator.h"

namespace kvgate::haystack {

namespace {

struct Candidate {
  nlohmann::json input;
  std::vector<PlacedInsertion> placed;
  HaystackSelection selection;
  std::int64_t body_bytes = 0;
};

}  // namespace

const std::string& input_text(const nlohmann::json& input) {
  if (input.contains("messages")) return input["messages"].back().at("content").get_ref<const std::string&>();
  return input.at("prompt").get_ref<const std::string&>();
}

FittedHaystackInput fit_haystack_input(HaystackBuilder& builder, const HaystackPrompt& prompt,
                                       const TokenCounter& counter, const HaystackFitOptions& o,
                                       const std::string& what) {
  const std::int64_t reserve = reserved_special_tokens(o.api);
  LengthFitSpec spec{.target = o.target, .tolerance = o.tolerance, .reserve = reserve, .bytes_per_token = o.bytes_per_token};
  auto build_selection = [&](HaystackSelection selection) {
    Candidate c;
    c.selection = std::move(selection);
    c.body_bytes = c.selection.bytes;
    std::string text;
    text.reserve(prompt.before.size() + static_cast<std::size_t>(c.body_bytes) + prompt.after.size() + 256);
    text += prompt.before;
    c.placed = builder.render(c.selection, prompt.insertions, text);
    text += prompt.after;
    c.input = render_input(o.api, std::move(text));
    return c;
  };
  auto build = [&](std::int64_t budget) { return build_selection(builder.select(budget)); };
  auto count = [&](const Candidate& c) { return count_input(counter, c.input); };
  LengthFit<Candidate> fit = fit_length<Candidate>(spec, build, count);
  const LengthProbe* below = fit.found ? nullptr : fit.closest_below();
  if (below) {
    // The byte search jumped over the window (or stalled): vary the haystack's ending instead.
    Candidate last;
    auto count_selection = [&](const HaystackSelection& selection) {
      last = build_selection(selection);
      return static_cast<std::int64_t>(count(last));
    };
    const FineStepOptions fine_options{.lowest = fit.lowest, .highest = fit.highest};
    const FineStepResult fine =
        fine_step(builder, builder.select(below->budget), below->tokens, counter, fine_options, count_selection);
    fit.counts += fine.counts;
    if (fine.found) {
      fit.found = true;
      fit.candidate = std::move(last);
      fit.tokens = fine.tokens;
    } else {
      fit.failure += "; nor does any other ending of the haystack (up to " + std::to_string(fine_options.max_dropped) +
                     " of its last sentences dropped, up to " + std::to_string(fine_options.max_fillers) +
                     " pool sentences after them: " + std::to_string(fine.choices) + " predicted in the window, " +
                     std::to_string(fine.counts) + " counted)";
    }
  }
  if (!fit.found) {
    std::string hint = !below ? ": the instructions, question and needles alone exceed it; use a larger length"
                              : ": the token counter's counts do not track the text's size; please report this with the command";
    throw Error(what + ": cannot fit the input to " + std::to_string(o.target) + " tokens (" + fit.failure + ")" + hint);
  }
  FittedHaystackInput out;
  out.input = std::move(fit.candidate.input);
  for (const PlacedInsertion& p : fit.candidate.placed) {
    out.offsets.push_back(p.offset);
    out.depths.push_back(p.depth);
  }
  out.selection = std::move(fit.candidate.selection);
  out.pool_sentences = builder.sentences_before_stream();
  out.body_bytes = fit.candidate.body_bytes;
  out.tokens = fit.tokens;
  out.reserved = reserve;
  out.counts = fit.counts;
  return out;
}

std::unique_ptr<SentenceSource> make_trial_source(const Corpus* corpus, std::uint64_t seed, std::size_t* start) {
  *start = 0;
  if (!corpus) return std::make_unique<ProseGenerator>(seed);
  Rng rng(seed);
  *start = rng.below(corpus->sentences.size());
  return std::make_unique<CorpusCursor>(*corpus, *start, rng.next());
}

nlohmann::json haystack_meta(const Corpus* corpus, std::size_t start, const FittedHaystackInput& f) {
  nlohmann::json m = {{"sentences", f.selection.sentences + f.selection.fillers.size()}, {"bytes", f.body_bytes}};
  if (!corpus) {
    m["source"] = "prose";
    return m;
  }
  m["source"] = "file";
  m["files"] = corpus->names;
  m["sha256"] = corpus->sha256;
  // The stream begins after the sentences the top-up pool took; each time round repeats the text.
  const std::size_t first = start + f.pool_sentences;
  m["start_sentence"] = first % corpus->sentences.size();
  m["wraps"] = (first + f.selection.sentences) / corpus->sentences.size();
  return m;
}

nlohmann::json length_meta(const FittedHaystackInput& f, const TokenCounter& counter, std::int64_t target) {
  nlohmann::json m = {{"prompt_tokens", f.tokens},
                      {"target_tokens", target},
                      {"token_counter", counter.source()},
                      {"length_exact", counter.exact()}};
  if (!counter.exact())
    m["length_note"] = "estimated, not measured: pass --tokenizer or --tokenize-url for exact lengths";
  if (f.reserved > 0) m["reserved_special_tokens"] = f.reserved;
  m["fit_counts"] = f.counts;
  return m;
}

double measure_bytes_per_token(const TokenCounter& counter, SentenceSource& source, std::size_t bytes) {
  std::string text;
  while (text.size() < bytes) {
    Sentence s = source.next();
    if (!text.empty()) text += s.paragraph_start ? "\n\n" : " ";
    text += s.text;
  }
  const std::size_t tokens = counter.count_text(text);
  return tokens == 0 ? 4.0 : static_cast<double>(text.size()) / static_cast<double>(tokens);
}

}  // namespace kvgate::haystack
