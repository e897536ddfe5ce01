// Every KV format plugged into the CPU reference decoder: a random-weight Qwen3-shaped checkpoint
// scores the same random continuation with each --kv-format, every position reading its cache
// (teacher forcing). bf16 is the baseline; a format whose every layer is skipped is bf16 bit for bit;
// the mean KL divergence from the baseline grows in the expected order.
#include <cmath>
#include <map>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/core/rng.h"
#include "harness/decoder/score.h"
#include "tests/decoder_fixtures.h"
#include "kernels/kv_format.h"

using namespace kvgate::decoder;
using nlohmann::json;

namespace {

struct Scored {
  std::vector<std::vector<float>> logits;  // per continuation position
};

Scored score(const std::shared_ptr<const Model>& model, const kvgate::kernels::KvStoreOptions& kv, const std::vector<int>& prompt,
             const std::vector<int>& cont) {
  Session s(model, {.kv = kv, .max_chunk = 32});
  Scored out;
  score_continuation(s, prompt, cont, [&](int, std::span<const float> l) { out.logits.emplace_back(l.begin(), l.end()); });
  return out;
}

// Mean over positions of KL(p_base || p), in double.
double mean_kld(const Scored& base, const Scored& x) {
  double total = 0;
  for (std::size_t i = 0; i < base.logits.size(); ++i) {
    const auto& a = base.logits[i];
    const auto& b = x.logits[i];
    double ma = -INFINITY, mb = -INFINITY, sa = 0, sb = 0;
    for (std::size_t v = 0; v < a.size(); ++v) {
      ma = std::max(ma, double(a[v]));
      mb = std::max(mb, double(b[v]));
    }
    for (std::size_t v = 0; v < a.size(); ++v) {
      sa += std::exp(a[v] - ma);
      sb += std::exp(b[v] - mb);
    }
    double kl = 0;
    for (std::size_t v = 0; v < a.size(); ++v) {
      const double la = a[v] - ma - std::log(sa), lb = b[v] - mb - std::log(sb);
      kl += std::exp(la) * (la - lb);
    }
    total += kl;
  }
  return total / base.logits.size();
}

}  // namespace

TEST_CASE("kv formats in the decoder: every format decodes; bf16 is the baseline exactly; the error order holds", "[kv][decoder]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", kvtest::every_format_model());
  const int vocab = model->config().vocab_size;
  kvgate::Rng rng(2024);
  std::vector<int> prompt(16), cont(200);
  for (auto& t : prompt) t = static_cast<int>(rng.below(vocab));
  for (auto& t : cont) t = static_cast<int>(rng.below(vocab));

  const Scored base = score(model, {"bf16", {}}, prompt, cont);
  REQUIRE(base.logits.size() == cont.size());
  // bf16 again, and quantized formats with every layer kept in bf16: the same logits, bit for bit.
  CHECK(score(model, {"bf16", {}}, prompt, cont).logits == base.logits);
  for (const std::string f : {"int4_per_token_head", "turboquant_3bit_nc", "q4_0", "kivi2"}) {
    INFO(f << " with every layer skipped");
    CHECK(score(model, {f, {{"skip_layers", "0,1,2,3"}}}, prompt, cont).logits == base.logits);
  }

  std::map<std::string, double> kld;
  for (const auto& f : kvgate::kernels::kv_format_names()) {
    // TurboQuant's default protects the first and last two layers: all four here. Quantize them all,
    // and keep KIVI's full-precision window shorter than the sequence.
    json p = json::object();
    if (f.rfind("turboquant_", 0) == 0) p["skip_layers"] = json::array();
    if (f == "kivi2") p = {{"group_size", 32}, {"residual", 64}};
    const Scored s = score(model, {f, p}, prompt, cont);
    long long non_finite = 0;
    for (const auto& row : s.logits)
      for (float x : row) non_finite += !std::isfinite(x);
    CHECK(non_finite == 0);
    kld[f] = mean_kld(base, s);
    UNSCOPED_INFO(f << ": mean KLD vs bf16 " << kld[f]);
    if (f != "bf16") CHECK(kld[f] > 0.0);
  }
  CHECK(kld["bf16"] == 0.0);
  // The expected order: fp8 per-token-head < fp8 per tensor < int4 per-token-head < 3-bit.
  CHECK(kld["fp8_per_token_head"] < kld["fp8_e4m3"]);
  CHECK(kld["fp8_e4m3"] < kld["int4_per_token_head"]);
  CHECK(kld["int4_per_token_head"] < kld["turboquant_3bit_nc"]);
  // And the wider picture the bits predict.
  CHECK(kld["fp32"] < kld["fp8_per_token_head"]);
  CHECK(kld["int8_per_token_head"] < kld["int4_per_token_head"]);
  CHECK(kld["turboquant_4bit_nc"] < kld["turboquant_3bit_nc"]);
  CHECK(kld["q8_0"] < kld["q4_0"]);
  // A reference for the reader of a failure: all of them.
  for (const auto& [f, v] : kld) UNSCOPED_INFO(f << " " << v);
  CHECK(kld.size() == kvgate::kernels::kv_format_names().size());
}
