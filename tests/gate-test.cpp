// The gate end to end against local OpenAI-compatible servers (harness/gate/gate.h): a perfect
// baseline and a broken candidate FAIL, an identical candidate PASSes, a re-run resumes without a
// request, a task with `gate: false` informs but never decides, the maximum context comes from
// /v1/models, and configurations are checked before any work.
#include <atomic>
#include <filesystem>
#include <chrono>
#include <regex>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/run_dir.h"
#include "harness/core/sha256.h"
#include "harness/gate/gate.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using kvtest::contains;
using nlohmann::json;
namespace fs = std::filesystem;
namespace g = kvgate::gate;

namespace {

enum class Reader { perfect, broken, broken_multicode };

// An OpenAI-compatible server that reads the haystack: perfectly, not at all (broken), or perfectly
// except for multi-code (broken_multicode). /v1/models says max_model_len.
struct ReaderServer : kvtest::LocalServer {
  std::atomic<int> completions{0};
  explicit ReaderServer(Reader reader, int max_model_len = 0) {
    server.set_payload_max_length(64u << 20);
    server.Get("/v1/models", [max_model_len](const httplib::Request&, httplib::Response& res) {
      json m = {{"id", "m"}, {"object", "model"}};
      if (max_model_len) m["max_model_len"] = max_model_len;
      res.set_content(json{{"object", "list"}, {"data", {m}}}.dump(), "application/json");
    });
    server.Post("/v1/chat/completions", [this, reader](const httplib::Request& req, httplib::Response& res) {
      ++completions;
      const json body = json::parse(req.body);
      const std::string prompt = body["messages"].back()["content"].get<std::string>();
      std::string answer = "I could not find it.";
      std::smatch m;
      if (std::regex_search(prompt, m, std::regex("special magic (\\w+) for (\\S+) mentioned in the provided text\\?"))) {
        std::smatch v;
        std::regex_search(prompt, v, std::regex("special magic \\w+ for " + m[2].str() + " is: (\\S+)\\."));
        if (reader == Reader::perfect || reader == Reader::broken_multicode) answer = "It is " + v[1].str() + ".";
      } else if (reader == Reader::perfect) {
        answer.clear();
        const std::string question = prompt.substr(prompt.rfind("What "));
        static const std::regex name_re("[A-Z][a-z]+-[0-9]+");
        for (std::sregex_iterator it(question.begin(), question.end(), name_re), end; it != end; ++it) {
          std::smatch c;
          std::regex_search(prompt, c, std::regex("The access code for " + it->str() + " is ([0-9]{6})\\."));
          answer += it->str() + ": " + c[1].str() + "\n";
        }
      }
      const json choice = {{"index", 0}, {"message", {{"role", "assistant"}, {"content", answer}}}, {"finish_reason", "stop"}};
      res.set_content(json{{"id", "x"}, {"object", "chat.completion"}, {"model", "m"}, {"choices", {choice}},
                           {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 1}, {"total_tokens", 2}}}}
                          .dump(),
                      "application/json");
    });
    start();
    // Destroyed before listen() runs, httplib would miss the stop: wait until it listens.
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string base() const { return url("/v1"); }
};

// A small suite: NIAH and multi-code at two buckets. Identical runs of n trials a task show at
// most n / (n + z^2) (the score bound: 12 trials 0.816, 6 trials 0.689; 0.95 takes 52), so
// tests that want identical runs to PASS with few trials set a margin that few trials can show.
g::Suite small_suite(int per_bucket, bool gate_multicode = true, const std::string& lengths = "[1024, 2048]",
                     const std::string& margin = "0.95") {
  const std::string yaml = "suite: small\nseed: 3\nmargin: " + margin + "\ndefaults: {per_bucket: " + std::to_string(per_bucket) +
                           ", sampling: {temperature: 0, max_tokens: 64}}\n"
                           "tasks:\n"
                           "  - task: niah\n    lengths: " + lengths + "\n    depths: [10, 50, 90]\n    max_tokens: 32\n"
                           "  - task: multicode\n    lengths: " + lengths + "\n    lines: 8\n    ask: 2\n    max_tokens: 64\n" +
                           (gate_multicode ? "" : "    gate: false\n");
  g::LineMap lines;
  return g::parse_suite(g::yaml_to_json(yaml, "small.yaml", &lines), "small.yaml", lines);
}

g::GateOptions options(const g::Suite& suite, const std::string& out, const std::string& baseline, std::vector<std::string> candidates) {
  g::GateOptions o;
  o.suite = suite;
  o.out_dir = out;
  o.configs = g::make_configurations({.baseline_url = baseline, .candidate_urls = std::move(candidates), .model = "m"});
  o.concurrency = 4;
  o.progress = "none";
  o.gen_threads = 1;
  return o;
}

std::size_t lines_of(const std::string& path) {
  std::size_t n = 0;
  kvgate::for_each_jsonl(path, [&](const json&, std::size_t) { ++n; });
  return n;
}

}  // namespace

TEST_CASE("gate: a perfect baseline against a broken candidate FAILs, with every file in DIR", "[gate][e2e]") {
  kvtest::TempDir dir;
  ReaderServer good(Reader::perfect), bad(Reader::broken);
  const std::string out = dir.file("g");
  const g::GateResult r = g::run_gate(options(small_suite(6), out, good.base(), {bad.base()}));
  CHECK(r.verdict == kvgate::compare::Verdict::fail);
  CHECK(r.exit_code == 1);
  CHECK_FALSE(r.stopped);

  // Trials once, a run per configuration and task, joined per configuration.
  for (const char* t : {"niah", "multicode"}) {
    CHECK(lines_of(out + "/tasks/" + t + ".jsonl") == 12);
    for (const char* label : {"baseline", "candidate"}) CHECK(fs::exists(out + "/runs/" + label + "/" + t + "/results.jsonl"));
  }
  const kvgate::RunDir joined = kvgate::load_run_dir(out + "/runs/candidate");
  CHECK(joined.results.records.size() == 24);
  CHECK(joined.manifest.label == "candidate");
  CHECK(joined.manifest.extra["gate_tasks"].contains("multicode"));
  // The joined run pins its task files: the sha256 of "<task> <sha256>" per task, the same for every configuration.
  const kvgate::RunDir niah_run = kvgate::load_run_dir(out + "/runs/candidate/niah");
  const kvgate::RunDir multicode_run = kvgate::load_run_dir(out + "/runs/candidate/multicode");
  REQUIRE(niah_run.manifest.tasks_sha256.size() == 64);
  CHECK(joined.manifest.tasks_sha256 ==
        kvgate::sha256_hex("niah " + niah_run.manifest.tasks_sha256 + "\nmulticode " + multicode_run.manifest.tasks_sha256 + "\n"));
  CHECK(kvgate::load_run_dir(out + "/runs/baseline").manifest.tasks_sha256 == joined.manifest.tasks_sha256);

  // The JSON holds the verdict, the gate's record, and every task FAILs for the broken reader.
  const json j = json::parse(kvgate::read_file(out + "/compare.json"));
  CHECK(j["verdict"] == "FAIL");
  CHECK(j["exit_code"] == 1);
  CHECK(j["gate"]["suite"] == "small");
  CHECK(j["gate"]["configurations"][0]["label"] == "baseline");
  CHECK(j["gate"]["configurations"][1]["role"] == "candidate");
  CHECK(j["gate"]["tasks"][0]["buckets"] == json({1024, 2048}));
  REQUIRE(j["pairs"].size() == 1);
  for (const json& t : j["pairs"][0]["tasks"]) {
    CHECK(t["verdict"] == "FAIL");
    CHECK(t["gated"] == true);
  }
  CHECK(r.main_report == out + "/report.html");
  CHECK(j["gate"]["reports"]["html"] == out + "/report.html");
  for (const char* f : {"report.html", "report.md", "junit.xml", "summary.txt", "gate.json"}) CHECK(fs::exists(out + "/" + f));
  // The HTML shows the lost trials' prompts (from the gate's tasks files) and both answers.
  const std::string html = kvgate::read_file(out + "/report.html");
  CHECK_THAT(html, contains("FAIL"));
  CHECK_THAT(html, contains("I could not find it."));
  CHECK_THAT(html, contains("special magic"));
  // JUnit: one failing testcase per gated task.
  const std::string junit = kvgate::read_file(out + "/junit.xml");
  CHECK_THAT(junit, contains("<failure"));
  CHECK_THAT(junit, contains("niah"));
}

TEST_CASE("gate: an identical candidate PASSes; a re-run resumes without a request", "[gate][e2e]") {
  kvtest::TempDir dir;
  ReaderServer a(Reader::perfect), b(Reader::perfect);
  const std::string out = dir.file("g");
  const g::GateOptions o = options(small_suite(6, true, "[1024, 2048]", "0.8"), out, a.base(), {b.base()});
  const g::GateResult r = g::run_gate(o);
  INFO(r.comparison.reasons.size());
  CHECK(r.verdict == kvgate::compare::Verdict::pass);
  CHECK(r.exit_code == 0);
  CHECK(a.completions == 24);
  CHECK(b.completions == 24);

  const g::GateResult again = g::run_gate(o);
  CHECK(again.verdict == kvgate::compare::Verdict::pass);
  CHECK(a.completions == 24);  // every result was in the journals
  CHECK(b.completions == 24);
  CHECK(kvgate::load_run_dir(out + "/runs/baseline").results.records.size() == 24);  // joined afresh, not appended

  // A killed run leaves part of a journal: the re-run sends only what is missing.
  const std::string journal = out + "/runs/candidate/niah/results.jsonl";
  std::string text = kvgate::read_file(journal);
  text.resize(text.find('\n', text.size() / 2) + 1);
  kvtest::write_text(journal, text);
  const std::size_t kept = lines_of(journal);
  g::run_gate(o);
  CHECK(b.completions == 24 + static_cast<int>(12 - kept));

  // Another suite in the same DIR is refused before any request.
  CHECK_THROWS_WITH(g::run_gate(options(small_suite(7, true, "[1024, 2048]", "0.8"), out, a.base(), {b.base()})),
                    contains("holds a gate made with another suite"));
}

TEST_CASE("gate: a task with gate: false is compared and reported but does not decide", "[gate][e2e]") {
  kvtest::TempDir dir;
  ReaderServer good(Reader::perfect), half(Reader::broken_multicode);
  const g::GateResult r = g::run_gate(options(small_suite(6, false, "[1024, 2048]", "0.8"), dir.file("g"), good.base(), {half.base()}));
  CHECK(r.verdict == kvgate::compare::Verdict::pass);
  const json j = json::parse(kvgate::read_file(dir.file("g/compare.json")));
  CHECK(j["options"]["informative_tasks"] == json({"multicode"}));
  for (const json& t : j["pairs"][0]["tasks"]) {
    if (t["task"] == "multicode") {
      CHECK(t["gated"] == false);
      CHECK(t["verdict"] == "FAIL");
      CHECK_THAT(t["reasons"][0].get<std::string>(), contains("informative"));
    } else {
      CHECK(t["gated"] == true);
      CHECK(t["verdict"] == "PASS");
    }
  }
}

TEST_CASE("gate: buckets go up to the servers' smallest max_model_len", "[gate][e2e]") {
  kvtest::TempDir dir;
  ReaderServer a(Reader::perfect, 4000), b(Reader::perfect, 3500);
  const g::GateResult r = g::run_gate(options(small_suite(2, true, "{from: 1024, to: max}"), dir.file("g"), a.base(), {b.base()}));
  // 3500 - 32 (niah's answer) = 3468: 1024, 2048, then 3072 (> 10% above 2048).
  REQUIRE(r.tasks.size() == 2);
  CHECK(r.tasks[0].buckets == std::vector<std::int64_t>{1024, 2048, 3072});
  CHECK(r.max_context == 3500);
  CHECK_THAT(r.max_context_source, contains("candidate"));

  // A listed bucket beyond the context is left out; none fitting is an error.
  kvtest::TempDir dir2;
  const g::GateResult r2 = g::run_gate(options(small_suite(2, true, "[1024, 8192]"), dir2.file("g"), a.base(), {b.base()}));
  CHECK(r2.tasks[0].buckets == std::vector<std::int64_t>{1024});
  CHECK_THROWS_WITH(g::run_gate(options(small_suite(2, true, "[8192]"), dir2.file("h"), a.base(), {b.base()})),
                    contains("every bucket is beyond the model's context"));
  // No server tells and the ladder has no end: ask for --max-context.
  ReaderServer c(Reader::perfect), d(Reader::perfect);
  CHECK_THROWS_WITH(g::run_gate(options(small_suite(2, true, "{from: 1024}"), dir2.file("i"), c.base(), {d.base()})),
                    contains("--max-context"));
}

// llama-server's metadata only: /props (per-slot n_ctx 4096, 4 slots), /v1/models listing its file name.
struct LlamaPropsServer : kvtest::LocalServer {
  LlamaPropsServer() {
    server.Get("/props", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(json{{"default_generation_settings", {{"n_ctx", 4096}}}, {"total_slots", 4}, {"build_info", "b7100-a1b2c3d4e"}}.dump(),
                      "application/json");
    });
    server.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(json{{"object", "list"}, {"data", {{{"id", "demo.gguf"}, {"owned_by", "llamacpp"}, {"meta", {{"n_ctx", 4096}}}}}}}.dump(),
                      "application/json");
    });
    start();
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string base() const { return url("/v1"); }
};

TEST_CASE("gate: llama-server's context is per slot, says where it came from and how to start the server for the suite", "[gate]") {
  kvtest::TempDir dir;
  ReaderServer a(Reader::perfect, 40000);
  LlamaPropsServer llama;
  try {
    g::run_gate(options(small_suite(2, true, "[8192]"), dir.file("g"), a.base(), {llama.base()}));
    FAIL("no error");
  } catch (const kvgate::Error& e) {
    const std::string what = e.what();
    CHECK_THAT(what, contains("every bucket is beyond the model's context (4096 tokens: candidate at " + llama.base()));
    CHECK_THAT(what, contains("4096 tokens per slot (llama.cpp /props default_generation_settings.n_ctx, total_slots 4: "
                              "llama-server -c 16384 -np 4"));
    // 8192 tokens and niah's 32 generated, rounded up to 1024s, per slot.
    CHECK_THAT(what, contains("start llama-server with -c 36864 -np 4, or with fewer slots (-c 9216 -np 1)"));
    CHECK_THAT(what, !contains("/v1/models max_model_len"));
  }
}

TEST_CASE("gate: configurations are checked before any work", "[gate]") {
  using T = g::Targets;
  CHECK_THROWS_WITH(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"}}),
                    contains("--model missing"));
  CHECK_THROWS_WITH(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .model = "m"}), contains("no candidate"));
  CHECK_THROWS_WITH(g::make_configurations(T{.model_dir = "x", .candidate_kv = {"bf16"}}), contains("labelled \"bf16\""));
  CHECK_THROWS_WITH(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"},
                                             .model = "m", .candidate_labels = {"a/b"}}),
                    contains("a label names a directory"));
  // With --baseline URL, --baseline-kv declares the server's format; settings belong to the server.
  CHECK(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"}, .model = "m",
                                 .baseline_kv = "bf16"})[0]
            .kv_format == "bf16");
  CHECK_THROWS_WITH(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"},
                                             .model = "m", .baseline_kv = "fp8_e4m3,skip=0"}),
                    contains("--baseline-kv fp8_e4m3+skip(0): an endpoint's KV format is declared, not set"));
  CHECK_THROWS_WITH(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"},
                                             .model = "m", .device = "cpu"}),
                    contains("--device belongs to the reference decoder"));

  // Labels: endpoints "baseline"/"candidate[-i]", KV formats by name, overrides in candidate order.
  auto c = g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1",
                                    .candidate_urls = {"http://127.0.0.1:2/v1", "http://127.0.0.1:3/v1"},
                                    .model = "m"});
  REQUIRE(c.size() == 3);
  CHECK(c[0].label == "baseline");
  CHECK(c[1].label == "candidate-1");
  CHECK(c[2].label == "candidate-2");
  c = g::make_configurations(T{.model_dir = "ckpt", .candidate_kv = {"fp8_e4m3", "int4_per_token_head"}, .device = "cpu",
                               .candidate_labels = {"fp8"}});
  REQUIRE(c.size() == 3);
  CHECK(c[0].label == "bf16");
  CHECK(c[0].backend.kind == "reference");
  CHECK(c[0].backend.reference.kv_format == "bf16");
  CHECK(c[0].backend.reference.device == "cpu");
  CHECK(c[1].label == "fp8");
  CHECK(c[2].label == "int4_per_token_head");
  CHECK(c[2].backend.reference.model_dir == fs::absolute("ckpt").lexically_normal().string());  // resumes from anywhere

  // An engine log that is not there is refused before any work.
  kvtest::TempDir dir;
  ReaderServer a(Reader::perfect), b(Reader::perfect);
  g::GateOptions o = options(small_suite(2), dir.file("g"), a.base(), {b.base()});
  o.configs[0].engine_log = dir.file("vllm.log");
  CHECK_THROWS_WITH(g::run_gate(o), contains("vllm.log of baseline: no such file"));
  CHECK(a.completions == 0);
}

TEST_CASE("gate: a suite with history appends each gate to --history once", "[gate][e2e]") {
  kvtest::TempDir dir;
  ReaderServer a(Reader::perfect), b(Reader::broken);
  g::Suite s = small_suite(2);
  s.history = true;
  g::GateOptions o = options(s, dir.file("night1"), a.base(), {b.base()});
  CHECK_THROWS_WITH(g::run_gate(o), contains("pass --history FILE"));
  o.history_db = dir.file("history.jsonl");
  CHECK(g::run_gate(o).verdict == kvgate::compare::Verdict::fail);
  REQUIRE(lines_of(o.history_db) == 1);
  const json row = json::parse(kvgate::read_file(o.history_db));
  CHECK(row["verdict"] == "FAIL");
  CHECK(row["candidate"] == "candidate");
  g::run_gate(o);  // the same night again: not added twice
  CHECK(lines_of(o.history_db) == 1);
}

TEST_CASE("gate: a task's own margin decides that task", "[gate][e2e]") {
  kvtest::TempDir dir;
  ReaderServer a(Reader::perfect), b(Reader::perfect);
  g::Suite s = small_suite(3);
  s.tasks[0].margin = 1.0;  // niah: the candidate must be better than the baseline, which identical runs cannot show
  s.tasks[1].margin = 0.6;  // multicode: what 6 identical trials can show (6 / (6 + z^2) = 0.689)
  const g::GateResult r = g::run_gate(options(s, dir.file("g"), a.base(), {b.base()}));
  CHECK(r.verdict == kvgate::compare::Verdict::inconclusive);
  CHECK(r.exit_code == 3);
  const json j = json::parse(kvgate::read_file(dir.file("g/compare.json")));
  CHECK(j["options"]["task_margins"]["niah"] == 1.0);
  for (const json& t : j["pairs"][0]["tasks"]) {
    CHECK(t["margin"] == (t["task"] == "niah" ? 1.0 : 0.6));
    CHECK(t["verdict"] == (t["task"] == "niah" ? "INCONCLUSIVE" : "PASS"));
  }
}

TEST_CASE("gate: endpoints' declared KV formats are recorded, shown by pinning, checked against the engine", "[gate][e2e]") {
  kvtest::TempDir dir;
  ReaderServer a(Reader::perfect), b(Reader::perfect);
  const std::string out = dir.file("g");
  g::GateOptions o = options(small_suite(2, true, "[1024]", "0.5"), out, a.base(), {b.base()});
  o.configs = g::make_configurations({.baseline_url = a.base(), .candidate_urls = {b.base()}, .model = "m", .baseline_kv = "bf16",
                                      .candidate_kv = {"fp8_e4m3"}});
  // The candidate's startup log says another format: refused before any request, naming both.
  const std::string log = dir.file("vllm.log");
  kvtest::write_text(log, "INFO 11-29 16:15:02 [core.py:74] Initializing a V1 LLM engine (v0.10.2) with config: model='m', "
                          "kv_cache_dtype=auto, seed=0\n");
  o.configs[1].engine_log = log;
  CHECK_THROWS_WITH(g::run_gate(o), contains("candidate: declared KV format fp8_e4m3 but the engine reports auto"));
  CHECK(a.completions == 0);
  o.configs[1].engine_log.clear();
  g::run_gate(o);
  const json run = json::parse(kvgate::read_file(out + "/runs/candidate/niah/run.json"));
  CHECK(run["kv"]["format"] == "fp8_e4m3");
  const json c = json::parse(kvgate::read_file(out + "/compare.json"));
  const json kv = c["pairs"][0]["pinning"]["kv_settings"];
  REQUIRE(kv.size() == 1);
  CHECK(kv[0]["reference"] == "bf16");
  CHECK(kv[0]["candidate"] == "fp8_e4m3");
  CHECK(c["gate"]["configurations"][1]["kv_format"] == "fp8_e4m3");
}
