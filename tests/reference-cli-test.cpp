// The reference decoder end to end through the kvgate binary on a make-model checkpoint (CPU):
// `run --backend reference` writes a run directory with the KV format record; `serve` answers
// kvgate's own driver with the same answers, and the official OpenAI Python client; `kld` and
// `calibrate` produce their reports and files, and calibrated scales load back with --kv-scales.
#include <filesystem>

#include "tests/catch_compat.hpp"
#include "harness/core/jsonl.h"
#include "harness/decoder/device.h"
#include "harness/decoder/make_model.h"
#include "tests/serve_process.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::run_kvgate;

namespace {

const char* kText =
    "The harbour was quiet in the early morning. Fishing boats rocked against the pier while gulls circled above, "
    "calling to each other over the grey water. An old man mended his nets on the stones, his hands moving slowly "
    "and surely, as they had for fifty years. Down the lane the baker opened his shutters and the smell of bread "
    "drifted towards the sea. Children ran past with a dog at their heels, laughing at nothing in particular. "
    "By noon the fog had lifted and the whole bay shone under a pale sun; the boats went out one after another, "
    "and the town settled into the long patience of a working day. ";

struct Setup {
  kvtest::TempDir tmp;
  std::string model = tmp.file("tiny"), tasks = tmp.file("tasks.jsonl"), text = tmp.file("text.txt");
  Setup() {
    kvgate::decoder::make_model({.seed = 3, .max_position = 1024}, model);
    std::string lines;
    const char* questions[] = {"Where were the boats?", "What did the baker do?", "Who mended the nets?"};
    for (int i = 0; i < 3; ++i)
      lines += json{{"id", "t/" + std::to_string(i)},
                    {"task", "golden"},
                    {"bucket", 0},
                    {"input", {{"messages", {{{"role", "user"}, {"content", questions[i]}}}}, {"max_tokens", 12}}},
                    {"target", "the"},
                    {"grader", {{"name", "contains"}}}}
                   .dump() +
               "\n";
    kvtest::write_text(tasks, lines);
    std::string t;
    for (int i = 0; i < 4; ++i) t += kText;
    kvtest::write_text(text, t);
  }
};

std::vector<json> results(const std::string& dir) {
  std::vector<json> out;
  std::string all = kvtest::read_text(dir + "/results.jsonl");
  std::size_t pos = 0;
  while (pos < all.size()) {
    const std::size_t nl = all.find('\n', pos);
    out.push_back(json::parse(all.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) { return a["id"] < b["id"]; });
  return out;
}

std::string python() {
  if (const char* p = std::getenv("KVGATE_PYTHON"); p && *p) return p;
  return std::filesystem::exists(".venv-tests/bin/python") ? ".venv-tests/bin/python" : "";
}

}  // namespace

TEST_CASE("run --backend reference: a run directory with the KV format record; resume checks the scales", "[e2e][reference]") {
  Setup s;
  const std::string out = s.tmp.file("run-fp8");
  const std::vector<std::string> args = {"run", "--tasks", s.tasks, "--out", out, "--backend", "reference", "--model-dir", s.model,
                                         "--kv-format", "fp8_e4m3", "--device", "cpu", "--temperature", "0", "--progress", "none"};
  auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json m = json::parse(kvtest::read_text(out + "/run.json"));
  CHECK(m["backend"] == "reference");
  CHECK(m["kv"]["format"] == "fp8_e4m3");
  CHECK(m["kv"]["k_scale"] == 1.0);
  CHECK(m["kv"]["bytes_per_token"].get<double>() > 0);
  CHECK(m["engine"]["summary"]["engine"] == "kvgate-reference");
  CHECK(m["engine"]["summary"]["kv_cache_dtype"] == "fp8_e4m3");
  CHECK(m["backend_description"]["device"]["device"] == "cpu");
  CHECK(m["kv"]["kernel_switches"] == json::object());
  const auto lines = results(out);
  REQUIRE(lines.size() == 3);
  for (const json& l : lines) {
    CHECK(l["error"].is_null());
    CHECK(l["prompt_tokens"].get<int>() > 5);
    CHECK(l["completion_tokens"].get<int>() >= 1);
  }
  // The same directory with other scales is another configuration: refused, not mixed.
  const std::string scales = s.tmp.file("s.json");
  kvtest::write_text(scales, R"({"kvgate_kv_scales": 1, "layers": [{"k": 0.01, "v": 0.02}, {"k": 0.01, "v": 0.02}]})");
  std::vector<std::string> with_scales = args;
  with_scales.insert(with_scales.end(), {"--kv-scales", scales});
  auto again = run_kvgate(with_scales);
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, kvtest::contains("another configuration"));
  // A fresh directory with the scales records them.
  with_scales[4] = s.tmp.file("run-fp8-scaled");
  REQUIRE(run_kvgate(with_scales).exit_code == 0);
  const json ms = json::parse(kvtest::read_text(with_scales[4] + "/run.json"));
  CHECK(ms["kv"]["scales"]["layers"][1]["v"] == 0.02f);
  // Bad input: an unknown format, a flag that belongs to the other backend.
  std::vector<std::string> bad = args;
  bad[10] = "fp7";
  bad[4] = s.tmp.file("bad");
  CHECK(run_kvgate(bad).exit_code == 2);
  auto wrong = run_kvgate({"run", "--tasks", s.tasks, "--out", s.tmp.file("w"), "--endpoint", "http://127.0.0.1:1/v1", "--model", "x",
                           "--kv-scales", scales});
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.err, kvtest::contains("--backend reference"));
  // Kernel switches: the CUDA-only "gemm" is refused by the CPU engine, saying so; bad JSON too.
  std::vector<std::string> switches = args;
  switches[4] = s.tmp.file("switches");
  switches.insert(switches.end(), {"--kernel-switches", R"({"gemm": "fp32"})"});
  auto sw = run_kvgate(switches);
  CHECK(sw.exit_code == 2);
  CHECK_THAT(sw.err, kvtest::contains("--device cuda"));
  CHECK_FALSE(std::filesystem::exists(switches[4] + "/results.jsonl"));
  switches.back() = "{not json";
  CHECK(run_kvgate(switches).exit_code == 2);
}

TEST_CASE("run --kernel-switches: engine emulation recorded in run.json; a bad switch is exit 2 naming it", "[e2e][reference]") {
  Setup s;
  const std::string out = s.tmp.file("run-emu");
  std::vector<std::string> args = {"run", "--tasks", s.tasks, "--out", out, "--backend", "reference", "--model-dir", s.model,
                                   "--kv-format", "fp8_e4m3", "--device", "cpu", "--temperature", "0", "--progress", "none",
                                   "--kernel-switches", R"({"q_fp8": true, "pv_fp8": true, "pv_accum": "two_level", "pv_promote_every": 64})"};
  auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json m = json::parse(kvtest::read_text(out + "/run.json"));
  CHECK(m["kv"]["kernel_switches"]["pv_accum"] == "two_level");
  CHECK(m["kv"]["kernel_switches"]["pv_promote_every"] == 64);
  CHECK(m["identity"]["kernel_switches"]["q_fp8"] == true);
  CHECK(results(out).size() == 3);
  // Bad switches: exit 2 before anything is written, the message naming the switch and the fix.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"pv_accum": "fp16"})", "\"pv_accum\" = \"fp16\" is not valid"},
      {R"({"pv_accum": "reduced"})", "set \"pv_fp8\": true"},
      {R"({"pv_fp8": true, "pv_promote_every": 100})", "a multiple of 32"},
      {R"({"pv_fp8": true, "pv_promote_every": 64})", "needs \"pv_accum\": \"two_level\""},
      {R"({"q_scale": 0.5})", "needs \"q_fp8\""},
      {R"({"q_fp8": 1})", "true or false"},
      {R"({"q_vec_dot": "q4_0"})", "\"q_vec_dot\" = \"q4_0\" is not valid"},
      {R"({"q_vec_dot": "q8_0", "q_fp8": true})", "keep one"},
      {R"({"qfp8": true})", "unknown switch \"qfp8\""},
  };
  for (const auto& [value, message] : bad) {
    args[4] = s.tmp.file("bad-emu");
    args.back() = value;
    auto b = run_kvgate(args);
    INFO(value << ": " << b.err);
    CHECK(b.exit_code == 2);
    CHECK_THAT(b.err, kvtest::contains(message));
    CHECK_FALSE(std::filesystem::exists(args[4] + "/run.json"));
  }
}

TEST_CASE("run, kld, calibrate, serve without --device: the default device, recorded", "[e2e][reference]") {
  Setup s;
  const std::string expected = kvgate::decoder::resolve_device("");  // cpu on a machine without a GPU
  const std::string out = s.tmp.file("run");
  auto r = run_kvgate({"run", "--tasks", s.tasks, "--out", out, "--backend", "reference", "--model-dir", s.model, "--kv-format",
                       "bf16", "--temperature", "0", "--max-tokens", "4", "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json m = json::parse(kvtest::read_text(out + "/run.json"));
  CHECK(m["backend_description"]["device"]["device"] == expected);
  CHECK(m["backend_description"]["device"]["requested"].is_null());
  CHECK(m["engine"]["summary"]["device"] == expected);
  auto k = run_kvgate({"kld", "--model-dir", s.model, "--kv-format", "fp8_e4m3", "--text", s.text, "--ctx", "64", "--chunks", "1", "--json"});
  INFO(k.err);
  REQUIRE(k.exit_code == 0);
  CHECK(json::parse(k.out)["device"]["device"] == expected);
  auto c = run_kvgate({"calibrate", "--model-dir", s.model, "--data", s.text, "--out", s.tmp.file("sc.json"), "--ctx", "64", "--max-tokens", "64"});
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(json::parse(c.out)["device"] == expected);
  kvtest::ServeProcess server({"--model-dir", s.model});
  CHECK_THAT(server.first_line(), kvtest::contains(", " + expected + ")"));
  CHECK(server.stop() == 0);
}

TEST_CASE("serve: kvgate's driver gets the reference backend's answers; the OpenAI Python client works", "[e2e][serve]") {
  Setup s;
  const std::string ref = s.tmp.file("run-ref"), http = s.tmp.file("run-http");
  REQUIRE(run_kvgate({"run", "--tasks", s.tasks, "--out", ref, "--backend", "reference", "--model-dir", s.model, "--kv-format",
                      "int4_per_token_head", "--device", "cpu", "--temperature", "0", "--progress", "none"})
              .exit_code == 0);
  kvtest::ServeProcess server({"--model-dir", s.model, "--kv-format", "int4_per_token_head", "--device", "cpu",
                               "--served-model-name", "tiny"});
  CHECK_THAT(server.first_line(), kvtest::contains("int4_per_token_head"));
  auto r = run_kvgate({"run", "--tasks", s.tasks, "--out", http, "--endpoint", server.base_url(), "--model", "tiny", "--kv-format",
                       "int4_per_token_head", "--temperature", "0", "--concurrency", "3", "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto a = results(ref), b = results(http);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i]["id"]);
    CHECK(b[i]["error"].is_null());
    CHECK(b[i]["response"] == a[i]["response"]);
    CHECK(b[i]["finish_reason"] == a[i]["finish_reason"]);
    CHECK(b[i]["prompt_tokens"] == a[i]["prompt_tokens"]);
  }
  const json m = json::parse(kvtest::read_text(http + "/run.json"));
  CHECK(m["engine"]["summary"]["engine"] == "kvgate-reference");
  CHECK(m["engine"]["summary"]["kv_cache_dtype"] == "int4_per_token_head");
  CHECK(m["engine"]["summary"]["max_model_len"] == 1024);

  const std::string py = python();
  if (py.empty()) FAIL("no .venv-tests/bin/python: run scripts/setup (it installs the openai client) or set KVGATE_PYTHON");
  const std::string cmd = py + " tests/tools/openai_client_check.py " + server.base_url() + " tiny 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = ::pclose(p);
  INFO(out);
  CHECK(status == 0);
  CHECK_THAT(out, kvtest::contains("openai client checks: ok"));
  CHECK(server.stop() == 0);  // SIGTERM: a clean stop
}

TEST_CASE("serve: a port in use and a bad format are errors", "[e2e][serve]") {
  Setup s;
  kvtest::ServeProcess first({"--model-dir", s.model, "--device", "cpu"});
  auto busy = run_kvgate({"serve", "--model-dir", s.model, "--device", "cpu", "--port", std::to_string(first.port())});
  CHECK(busy.exit_code == 2);
  CHECK_THAT(busy.err, kvtest::contains("cannot listen"));
  auto fmt = run_kvgate({"serve", "--model-dir", s.model, "--device", "cpu", "--port", "0", "--kv-format", "fp7"});
  CHECK(fmt.exit_code == 2);
}

TEST_CASE("kld: bf16 against itself is 0, fp8 above it, in llama-perplexity's layout", "[e2e][kld]") {
  Setup s;
  const auto kld = [&](const std::string& fmt, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"kld", "--model-dir", s.model, "--kv-format", fmt, "--text", s.text, "--ctx", "128", "--device", "cpu", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    auto r = run_kvgate(a);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  };
  const json same = kld("bf16");
  CHECK(same["kld_mean"] == 0.0);
  CHECK(same["same_top_p"] == 1.0);
  CHECK(same["chunks"].get<int>() >= 2);
  CHECK(same["positions_scored"] == same["chunks"].get<int>() * 127);
  CHECK(same["by_position"].size() == 8);
  const json fp8 = kld("fp8_e4m3");
  const json int4 = kld("int4_per_token_head");
  CHECK(fp8["kld_mean"].get<double>() > 0.0);
  CHECK(fp8["kld_mean"].get<double>() < int4["kld_mean"].get<double>());
  CHECK(fp8["kv"]["format"] == "fp8_e4m3");
  CHECK(fp8["base_kv"]["format"] == "bf16");
  CHECK(fp8["device"]["device"] == "cpu");
  // The text layout.
  auto t = run_kvgate({"kld", "--model-dir", s.model, "--kv-format", "fp8_e4m3", "--text", s.text, "--ctx", "128", "--chunks", "2", "--device", "cpu"});
  REQUIRE(t.exit_code == 0);
  for (const char* line : {"chunk             PPL", "====== KL divergence statistics ======", "Mean    KLD:", "Same top p:", "RMS Δp    :",
                           "KL divergence by context position"})
    CHECK_THAT(t.out, kvtest::contains(line));
  auto too_long = run_kvgate({"kld", "--model-dir", s.model, "--kv-format", "bf16", "--text", s.text, "--ctx", "100000", "--device", "cpu"});
  CHECK(too_long.exit_code == 2);
}

TEST_CASE("calibrate: scales and the SGLang export; --kv-scales loads both back; calibrated beats a saturating scale", "[e2e][calibrate]") {
  Setup s;
  const std::string out = s.tmp.file("scales.json");
  auto r = run_kvgate({"calibrate", "--model-dir", s.model, "--data", s.text, "--out", out, "--ctx", "128", "--device", "cpu"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json summary = json::parse(r.out);
  CHECK(summary["sglang_out"] == s.tmp.file("scales.sglang.json"));
  const json scales = json::parse(kvtest::read_text(out));
  CHECK(scales["kvgate_kv_scales"] == 1);
  CHECK(scales["granularity"] == "tensor");
  REQUIRE(scales["layers"].size() == 2);
  // scale = amax / 448 with amax the largest over the heads.
  for (int l = 0; l < 2; ++l) {
    const json& a = scales["amax"]["layers"][l]["k"];
    const double amax = std::max(a[0].get<double>(), a[1].get<double>());
    CHECK(scales["layers"][l]["k"].get<double>() == kvtest::Approx(amax / 448.0));
  }
  const json sg = json::parse(kvtest::read_text(s.tmp.file("scales.sglang.json")));
  CHECK(sg["model_type"] == "qwen3");
  CHECK(sg["kv_cache"]["dtype"] == "float8_e4m3fn");
  CHECK(sg["kv_cache"]["scaling_factor"]["0"].size() == 2);
  const auto kld = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"kld", "--model-dir", s.model, "--kv-format", "fp8_e4m3", "--text", s.text, "--ctx", "128", "--device", "cpu", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    auto k = run_kvgate(a);
    INFO(k.err);
    REQUIRE(k.exit_code == 0);
    return json::parse(k.out);
  };
  // E4M3 has the same relative precision over its normal range, so on this model (|K|, |V| < 10)
  // scale 1.0 is about as good as calibrated; what calibration prevents is saturation: a scale
  // 16 times too small clips, a calibrated one does not.
  const double k0 = scales["layers"][0]["k"].get<double>();
  const json saturating = kld({"--kv-params", json{{"k_scale", k0 / 16}, {"v_scale", k0 / 16}}.dump()});
  const json cal = kld({"--kv-scales", out});
  const json cal_sglang = kld({"--kv-scales", s.tmp.file("scales.sglang.json")});
  for (int l = 0; l < 2; ++l) {  // what --kv-scales loaded is what calibrate wrote, in both layouts
    CHECK(cal["kv"]["scales"]["layers"][l]["k"] == scales["layers"][l]["k"]);
    CHECK(cal["kv"]["scales"]["layers"][l]["v"] == scales["layers"][l]["v"]);
    const json& sf = sg["kv_cache"]["scaling_factor"]["0"][std::to_string(l)];
    CHECK(cal_sglang["kv"]["scales"]["layers"][l]["k"] == sf);
    CHECK(cal_sglang["kv"]["scales"]["layers"][l]["v"] == sf);
    CHECK(sf.get<double>() == kvtest::Approx(std::max(scales["layers"][l]["k"].get<double>(), scales["layers"][l]["v"].get<double>())));
  }
  UNSCOPED_INFO("saturating " << saturating["kld_mean"] << ", calibrated " << cal["kld_mean"] << ", sglang " << cal_sglang["kld_mean"]);
  CHECK(cal["kld_mean"].get<double>() > 0.0);
  CHECK(cal["kld_mean"].get<double>() * 4 < saturating["kld_mean"].get<double>());
  CHECK(cal_sglang["kld_mean"].get<double>() * 4 < saturating["kld_mean"].get<double>());
  // Per head, and bad input.
  auto head = run_kvgate({"calibrate", "--model-dir", s.model, "--data", s.text, "--out", s.tmp.file("h.json"), "--granularity", "head",
                          "--kv-format", "fp8_e5m2", "--ctx", "128", "--device", "cpu"});
  REQUIRE(head.exit_code == 0);
  CHECK(json::parse(kvtest::read_text(s.tmp.file("h.json")))["layers"][0]["k"].size() == 2);
  CHECK_FALSE(std::filesystem::exists(s.tmp.file("h.sglang.json")));  // e5m2: no SGLang export
  auto bad = run_kvgate({"calibrate", "--model-dir", s.model, "--data", s.text, "--out", s.tmp.file("x.json"), "--kv-format", "int8_per_token_head"});
  CHECK(bad.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(s.tmp.file("x.json")));
}

TEST_CASE("run --numerics: recorded in run.json; compare flags a mode mismatch; a contradiction is exit 2", "[e2e][reference][numerics]") {
  Setup s;
  const auto run = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> a = {"run", "--tasks", s.tasks, "--out", out, "--backend", "reference", "--model-dir", s.model,
                                  "--kv-format", "bf16", "--device", "cpu", "--temperature", "0", "--progress", "none"};
    a.insert(a.end(), extra.begin(), extra.end());
    return run_kvgate(a);
  };
  // Trials any text passes (a letter or a space), so that compare has scores on both sides.
  std::string any;
  for (int i = 0; i < 3; ++i)
    any += json{{"id", "any/" + std::to_string(i)},
                {"task", "golden"},
                {"bucket", 0},
                {"input", {{"messages", {{{"role", "user"}, {"content", "Say something " + std::to_string(i)}}}}, {"max_tokens", 12}}},
                {"target", {" ", "a", "e", "i", "o", "u", "n", "s", "t", "r", "l"}},
                {"grader", {{"name", "contains"}}}}
               .dump() +
           "\n";
  s.tasks = s.tmp.file("any.jsonl");
  kvtest::write_text(s.tasks, any);
  const std::string exact = s.tmp.file("exact"), engine = s.tmp.file("engine");
  auto r = run(exact, {});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run(engine, {"--numerics", "engine"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json me = json::parse(kvtest::read_text(exact + "/run.json")), mg = json::parse(kvtest::read_text(engine + "/run.json"));
  CHECK(me["engine"]["attention_numerics"] == "exact");  // the CPU's default
  CHECK(mg["engine"]["attention_numerics"] == "engine");
  CHECK(mg["kv"]["kernel_switches"]["numerics"] == "engine");
  auto c = run_kvgate({"compare", exact, engine});
  INFO(c.out << c.err);
  CHECK_THAT(c.out, kvtest::contains("differs: attention numerics exact -> engine"));
  // Resume compares the resolved numerics: the CPU's default run resumes under --numerics exact, an
  // engine run is refused in exact numerics and the error names the flag that resumes it.
  CHECK(me["identity"]["attention_numerics"] == "exact");
  CHECK(mg["identity"]["attention_numerics"] == "engine");
  CHECK_FALSE(mg["identity"].contains("kernel_switches"));
  r = run(exact, {"--numerics", "exact"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, kvtest::contains("3 already done, 0 to run"));
  r = run(engine, {});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, kvtest::contains("attention_numerics: \"engine\" -> \"exact\""));
  CHECK_THAT(r.err, kvtest::contains("(here --numerics engine)"));
  // A run.json written before the identity recorded the numerics: its "numerics" switch, else exact.
  json old_exact = me, old_engine = mg;
  old_exact["identity"].erase("attention_numerics");
  old_engine["identity"].erase("attention_numerics");
  old_engine["identity"]["kernel_switches"] = {{"numerics", "engine"}};
  kvtest::write_text(exact + "/run.json", old_exact.dump());
  kvtest::write_text(engine + "/run.json", old_engine.dump());
  CHECK(run(exact, {}).exit_code == 0);
  CHECK(run(engine, {"--numerics", "engine"}).exit_code == 0);
  r = run(exact, {"--numerics", "engine"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, kvtest::contains("(here --numerics exact)"));
  // --numerics and a "numerics" switch that disagree: exit 2 naming both, nothing written.
  auto bad = run(s.tmp.file("bad"), {"--numerics", "exact", "--kernel-switches", R"({"numerics": "engine"})"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, kvtest::contains("--numerics exact contradicts the kernel switch \"numerics\""));
  CHECK_FALSE(std::filesystem::exists(s.tmp.file("bad") + "/run.json"));
  CHECK(run(s.tmp.file("bad2"), {"--numerics", "fast"}).exit_code != 0);
  // kld: the test side in engine numerics against the exact baseline on the same bf16 cache.
  auto k = run_kvgate({"kld", "--model-dir", s.model, "--kv-format", "bf16", "--text", s.text, "--ctx", "128", "--chunks", "2",
                       "--device", "cpu", "--numerics", "engine", "--json"});
  INFO(k.err);
  REQUIRE(k.exit_code == 0);
  const json kj = json::parse(k.out);
  CHECK(kj["engine"]["attention_numerics"] == "engine");
  CHECK(kj["base_attention_numerics"] == "exact");
  CHECK(kj["kld_mean"].get<double>() > 0.0);
}
