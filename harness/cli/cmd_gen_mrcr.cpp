// kvgate gen mrcr: generated MRCR conversations at exact lengths, or official openai/mrcr rows
// (a JSONL export or the Hugging Face rows API) in the dataset card's bins.
#include <algorithm>
#include <memory>

#include "datasets/common/hf_rows.h"
#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/cli/gen_common.h"
#include "datasets/mrcr/mrcr_gen.h"
#include "datasets/mrcr/mrcr_official.h"

namespace kvgate::cli {

namespace {

struct MrcrCliOptions {
  GenCommonOptions common;
  std::string needles_text = "2,4,8";
  bool merge_user_turns = false;
  std::string official;      // JSONL export
  bool official_hf = false;  // Hugging Face rows API
  HfRowsSource hf{.dataset = "openai/mrcr"};
  int hf_page_rows = 10;
  int threads = 0;
  bool refresh = false, offline = false;
};

std::vector<int> parse_needles(const std::string& text) {
  std::vector<int> out;
  for (std::int64_t n : parse_lengths(text, "--needles")) {
    if (n > 64) throw Error("--needles " + text + ": " + std::to_string(n) + " is not a needle count between 1 and 64");
    out.push_back(static_cast<int>(n));
  }
  return out;
}

void report(const std::vector<Trial>& trials, const std::string& out) {
  std::map<std::int64_t, int> per;
  for (const Trial& t : trials) ++per[t.bucket];
  std::string s;
  for (auto [b, n] : per) s += (s.empty() ? "" : ", ") + std::to_string(b) + ": " + std::to_string(n);
  log_info("wrote " + std::to_string(trials.size()) + " mrcr trials to " + out + " (per bucket " + s + ")");
  std::int64_t longest = 0;
  for (const Trial& t : trials) longest = std::max<std::int64_t>(longest, t.meta.value("answer_tokens", std::int64_t{0}));
  log_info("answers take up to " + std::to_string(longest) + " tokens: give kvgate run a --max-tokens at least that large");
}

int run_official(const MrcrCliOptions& o, const TokenCounter& counter) {
  mrcr::OfficialTrialOptions to{.buckets = o.common.lengths(),
                                .per_bucket = o.common.per_bucket,
                                .needles = parse_needles(o.needles_text),
                                .merge_user_turns = o.merge_user_turns,
                                .counter = &counter,
                                .origin = o.official};
  if (o.official_hf) to.origin = "hf:" + o.hf.dataset + "/" + o.hf.config + "/" + o.hf.split;
  mrcr::OfficialTrialBuilder builder(to);
  if (o.official_hf) {
    const std::string where_base = o.hf.dataset + "/" + o.hf.config + "/" + o.hf.split + " row ";
    HfRowsOptions ho;
    ho.page_length = o.hf_page_rows;
    ho.refresh = o.refresh;
    ho.offline = o.offline;
    const HfRowsInfo info = for_each_hf_row(o.hf, ho, [&](const nlohmann::json& row, std::int64_t idx) {
      return builder.add(mrcr::parse_official_row(row, where_base + std::to_string(idx), idx));
    });
    log_verbose("Hugging Face rows cached in " + info.cache_dir + " (" + std::to_string(info.pages_fetched) + " pages fetched)");
  } else {
    mrcr::for_each_official_row(o.official, [&](mrcr::OfficialRow&& row) { return builder.add(row); });
  }
  std::vector<Trial> trials = builder.take_trials();
  const mrcr::OfficialSummary& s = builder.summary();
  if (trials.empty())
    throw Error(to.origin + ": no rows fall in the requested bins (" + std::to_string(s.rows) + " rows read, " +
                std::to_string(s.out_of_bins) + " outside 4096..1048576 tokens): check --lengths and --needles");
  for (std::int64_t b : to.buckets)
    if (s.per_bucket.count(b) == 0 || s.per_bucket.at(b) < o.common.per_bucket)
      log_warn("bucket " + std::to_string(b) + ": " + std::to_string(s.per_bucket.count(b) ? s.per_bucket.at(b) : 0) +
               " rows, fewer than --per-bucket " + std::to_string(o.common.per_bucket));
  std::stable_sort(trials.begin(), trials.end(), [](const Trial& a, const Trial& b) { return a.bucket < b.bucket; });
  write_tasks(o.common.out, trials);
  report(trials, o.common.out);
  return 0;
}

}  // namespace

void register_gen_mrcr(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<MrcrCliOptions>();
  CLI::App* sub = gen.add_subcommand("mrcr", "MRCR multi-round coreference: generated conversations, or official openai/mrcr rows");
  add_gen_common_options(sub, o->common, "8192,16384,32768,65536,131072");
  sub->add_option("--needles", o->needles_text, "Identical asks per conversation, cycled within a bucket (official rows: n_needles kept)")
      ->capture_default_str();
  sub->add_flag("--merge-user-turns", o->merge_user_turns,
                "Join consecutive user turns with \"\\n\" (chat templates that require alternation; the official prompts open with two)");
  sub->add_option("--official", o->official,
                  "Official rows from a JSONL export of openai/mrcr (prompt, answer, random_string_to_prepend, n_needles, ...), "
                  "or a Hugging Face rows API URL (as --official-hf); --lengths then picks the card's bins by upper edge");
  sub->add_flag("--official-hf", o->official_hf, "Official rows from the Hugging Face rows API, cached (resumes) under the kvgate cache");
  sub->add_option("--hf-dataset", o->hf.dataset, "Dataset for --official-hf")->capture_default_str();
  sub->add_option("--hf-config", o->hf.config, "Config (subset) for --official-hf")->capture_default_str();
  sub->add_option("--hf-split", o->hf.split, "Split for --official-hf")->capture_default_str();
  sub->add_option("--hf-endpoint", o->hf.endpoint, "Dataset viewer API base URL")->capture_default_str();
  sub->add_option("--hf-page-rows", o->hf_page_rows, "Rows a request (1..100; MRCR rows are large)")->capture_default_str();
  sub->add_option("--threads", o->threads, "Generation threads (0: one per hardware thread); the output does not depend on it")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--refresh", o->refresh, "Drop the cached rows and fetch again (the dataset changed upstream)");
  sub->add_flag("--offline", o->offline, "Use only cached rows");
  commands.add(sub, [o] {
    if (!o->official.empty() && o->official_hf) throw Error("--official and --official-hf both given: pass one");
    if (is_http_url(o->official)) {  // a rows API URL names the split: the same as --official-hf with --hf-*
      const HfRowsUrl url = parse_hf_rows_url(o->official);
      o->hf = url.source;
      if (url.page_length > 0) o->hf_page_rows = url.page_length;
      o->official_hf = true;
      o->official.clear();
    }
    const std::unique_ptr<TokenCounter> counter = open_token_counter(o->common.token_counter_options());
    if (!counter->exact()) log_warn("no --tokenizer or --tokenize-url: lengths are estimates (" + counter->source() + ")");
    if (!o->official.empty() || o->official_hf) return run_official(*o, *counter);
    mrcr::GenOptions g{.seed = o->common.seed,
                       .lengths = o->common.lengths(),
                       .per_bucket = o->common.per_bucket,
                       .needles = parse_needles(o->needles_text),
                       .merge_user_turns = o->merge_user_turns,
                       .counter = counter.get(),
                       .threads = o->threads};
    const std::vector<Trial> trials = mrcr::generate_trials(g);
    write_tasks(o->common.out, trials);
    report(trials, o->common.out);
    return 0;
  });
}

}  // namespace kvgate::cli
