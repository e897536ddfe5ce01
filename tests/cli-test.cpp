// The command-line contract (product.md): every subcommand exists with --help; errors exit 2.
#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;

TEST_CASE("cli: --help lists the whole contract", "[cli]") {
  auto r = run_kvgate({"--help"});
  CHECK(r.exit_code == 0);
  for (const char* cmd : {"gen", "run", "compare", "report", "gate", "make-model", "merge", "history", "grade", "stats",
                          "tokenize", "serve", "capacity", "calibrate", "kld", "validate"}) {
    INFO(cmd);
    CHECK_THAT(r.out, contains(std::string(cmd)));
  }
  CHECK_THAT(r.out, contains("Exit codes"));
}

TEST_CASE("cli: every subcommand has --help with its contract flags", "[cli]") {
  struct Case {
    std::vector<std::string> cmd;
    std::vector<std::string> flags;
  };
  std::vector<Case> cases = {
      {{"gen", "niah"}, {"--out", "--seed", "--lengths", "--per-bucket", "--tokenizer", "--tokenize-url"}},
      {{"gen", "multicode"}, {"--out", "--lengths"}},
      {{"gen", "mrcr"}, {"--out", "--lengths"}},
      {{"gen", "gsm8k"}, {"--out", "--seed"}},
      {{"gen", "golden"}, {"--out"}},
      {{"gen", "custom"}, {"--out"}},
      {{"run"}, {"--tasks", "--out", "--label", "--endpoint", "--model", "--api", "--backend", "--model-dir", "--kv-format",
                 "--device", "--concurrency", "--repeats", "--temperature", "--top-p", "--seed", "--max-tokens", "--timeout",
                 "--max-retries"}},
      {{"compare"}, {"--margin", "--alpha", "--auc-axis", "--json", "--markdown", "--html", "--junit"}},
      {{"report"}, {"--html"}},
      {{"gate"}, {"--suite", "--out", "--baseline", "--candidate", "--model", "--model-dir", "--baseline-kv", "--candidate-kv", "--device"}},
      {{"make-model"}, {"--arch", "--seed", "--layers", "--hidden", "--out"}},
      {{"merge"}, {"--out"}},
      {{"history", "add"}, {"--db"}},
      {{"history", "report"}, {"--db", "--html"}},
      {{"grade", "mrcr"}, {"--response", "--answer", "--prefix"}},
      {{"grade", "gsm8k"}, {"--response", "--target"}},
      {{"stats", "mcnemar"}, {"B", "C"}},
      {{"tokenize"}, {"--tokenizer", "--file", "--jsonl", "--count"}},
      {{"serve"}, {"--model-dir", "--kv-format", "--host", "--port", "--device"}},
      {{"capacity"}, {"--config", "--kv-format", "--gpu-mem-gb", "--mem-util", "--overhead-gb", "--weights-gb", "--seq-len", "--json"}},
      {{"calibrate"}, {"--model-dir", "--data", "--out"}},
      {{"kld"}, {"--model-dir", "--kv-format", "--text", "--json"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.cmd;
    args.push_back("--help");
    auto r = run_kvgate(args);
    INFO(args[0] << " " << (args.size() > 2 ? args[1] : ""));
    CHECK(r.exit_code == 0);
    for (const auto& f : c.flags) CHECK_THAT(r.out, contains(f));
  }
}

TEST_CASE("cli: --version names the version, commit and CUDA build", "[cli]") {
  auto r = run_kvgate({"--version"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("kvgate 0."));
  CHECK_THAT(r.out, contains("commit "));
  CHECK_THAT(r.out, contains("CUDA"));
}

TEST_CASE("cli: usage errors exit 2 with a message", "[cli]") {
  auto r = run_kvgate({"no-such-command"});
  CHECK(r.exit_code == 2);
  r = run_kvgate({"run", "--out", "x"});  // --tasks missing
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--tasks"));
  r = run_kvgate({"run", "--tasks", "t", "--out", "o", "--api", "grpc"});
  CHECK(r.exit_code == 2);
  r = run_kvgate({});
  CHECK(r.exit_code == 2);
}

TEST_CASE("cli: validate summarizes good files and rejects bad ones with exit 2", "[cli]") {
  kvtest::TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl");
  kvtest::write_text(tasks,
                     "{\"id\":\"a\",\"task\":\"niah\",\"bucket\":4096,\"input\":{\"prompt\":\"x\"},\"target\":\"1\",\"grader\":{\"name\":\"niah\"}}\n"
                     "{\"id\":\"b\",\"task\":\"niah\",\"bucket\":8192,\"input\":{\"prompt\":\"y\"},\"target\":\"2\",\"grader\":{\"name\":\"niah\"}}\n");
  auto r = run_kvgate({"validate", tasks});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("2 trials (niah 2), buckets 4096, 8192"));

  kvtest::write_text(dir.file("run.json"), "{\"label\":\"base\"}");
  kvtest::write_text(dir.file("results.jsonl"),
                     "{\"id\":\"a\",\"task\":\"niah\",\"bucket\":4096,\"repeat\":0,\"score\":1,\"passed\":true,\"error\":null}\n"
                     "{\"id\":\"b\",\"task\":\"niah\",\"bucket\":8192,\"repeat\":0,\"score\":0,\"passed\":false,\"error\":\"timeout\"}\n"
                     "{\"id\":\"c\",\"task\":");
  r = run_kvgate({"validate", dir.path()});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("run \"base\", 2 results"));
  CHECK_THAT(r.out, contains("1 passed, 1 errors"));
  CHECK_THAT(r.out, contains("torn last line"));

  kvtest::write_text(tasks, "{\"id\":\"a\",\"task\":\"niah\"}\n");
  r = run_kvgate({"validate", tasks});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains(tasks + ":1: field \"bucket\" missing"));
}

TEST_CASE("cli: gate without --out says what is missing and exits 2", "[cli]") {
  auto r = run_kvgate({"gate", "--suite", "quick"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--out DIR missing"));
}
