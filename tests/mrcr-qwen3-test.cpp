// Generated MRCR trials at exact lengths with the real Qwen3 tokenizer and chat template
// (tests/data/tokenizers/qwen3), and the official bins counted with it.
#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "datasets/mrcr/mrcr_gen.h"
#include "datasets/mrcr/mrcr_official.h"
#include "tests/test_util.h"
#include "harness/tokenizer/token_counter.h"

namespace mrcr = kvgate::mrcr;

namespace {
const kvgate::TokenCounter& qwen3() {
  static const std::unique_ptr<kvgate::TokenCounter> tc =
      kvgate::make_hf_token_counter(kvtest::data_dir() + "/tokenizers/qwen3/tokenizer.json");
  return *tc;
}
}  // namespace

TEST_CASE("mrcr gen with the Qwen3 tokenizer: every trial exactly its bucket", "[mrcr][tokenizer]") {
  const kvgate::TokenCounter& tc = qwen3();
  REQUIRE(tc.exact());
  for (bool merge : {false, true}) {
    mrcr::GenOptions o{.seed = 3, .lengths = {4096, 8192, 32768}, .per_bucket = 3, .needles = {2, 4, 8},
                       .merge_user_turns = merge, .counter = &tc};
    for (const kvgate::Trial& t : mrcr::generate_trials(o)) {
      INFO(t.id << (merge ? " merged" : ""));
      CHECK(tc.count_chat(t.input["messages"]) == static_cast<std::size_t>(t.bucket));
      CHECK(t.meta["exact_length"] == true);
      CHECK(t.meta["token_count_source"] == tc.source());
    }
  }
}

TEST_CASE("mrcr official bins with the Qwen3 tokenizer count contents plus the answer", "[mrcr][tokenizer]") {
  const kvgate::TokenCounter& tc = qwen3();
  const nlohmann::json m = nlohmann::json::array({{{"role", "user"}, {"content", "write a poem about tapirs"}},
                                                  {{"role", "assistant"}, {"content", "Tapirs wander."}}});
  CHECK(mrcr::bin_tokens(tc, m, "aYooSG8CQgTapirs wander.") ==
        static_cast<std::int64_t>(tc.count_text("write a poem about tapirs") + tc.count_text("Tapirs wander.") +
                                  tc.count_text("aYooSG8CQgTapirs wander.")));
}
