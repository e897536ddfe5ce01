// harness/provenance: engine startup logs of vLLM (V1 and V0), SGLang and TensorRT-LLM read into
// facts (excerpts in tests/fixtures/engine-logs, written from the engines' line formats), unknown
// lines ignored, a log with nothing known warns, secrets never copied, docs list every field.
#include <set>
#include <string>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/provenance/engine_log.h"
#include "tests/test_util.h"

using namespace kvgate;
using nlohmann::json;

namespace {
const std::string kDir = "tests/fixtures/engine-logs/";
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
json parse(const std::string& name) { return provenance::parse_engine_log(kDir + name); }
}  // namespace

TEST_CASE("vLLM V1 log: version, model, revision, the selected backend, fp8 with default scales, capacity") {
  const json log = parse("vllm-fp8-h200.log");
  const json& f = log["facts"];
  CHECK(log["engine"] == "vllm");
  CHECK(f["version"] == "0.19.1");
  CHECK(f["model"] == "Qwen/Qwen3-8B");
  CHECK(f["revision"] == "9c925d64d72725edaf899c6cb9c377fd0709d9c5");
  CHECK(f["attention_backend"] == "FLASH_ATTN");
  CHECK(f["attention_backend_candidates"] == "['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION']");
  CHECK(f["flash_attn_version"] == 3);
  CHECK(f["kv_cache_dtype"] == "fp8");
  CHECK(f["kv_scales"] == "default_1.0");
  CHECK(f["q_scale"] == "default_1.0");
  CHECK(f["kv_cache_tokens"] == 1519744);
  CHECK(f["max_concurrency"].get<double>() == kvtest::Approx(46.38));
  CHECK(f["max_concurrency_tokens_per_request"] == 32768);
  CHECK(f["max_model_len"] == 32768);
  CHECK(f["tensor_parallel"] == 1);
  CHECK(f["gpu"] == "NVIDIA H200");
  CHECK(log["warnings"].empty());
  CHECK(log["evidence"]["kv_cache_tokens"]["line"] == 17);
  CHECK(log["evidence"]["kv_cache_tokens"]["pattern"] == "vllm/kv_cache_size");
  CHECK(log["evidence"]["kv_cache_tokens"]["raw"] == "1,519,744");
  CHECK(log["sha256"].get<std::string>().size() == 64);
  CHECK(log["lines"] == 22);
  // The log holds an API key in an args line: nothing of it reaches the result.
  CHECK_FALSE(has(log.dump(), "SECRET"));
  CHECK(provenance::facts_line(log) ==
        "vllm 0.19.1, attention FLASH_ATTN (FlashAttention 3), KV fp8 (scales default_1.0), KV cache 1,519,744 tokens, "
        "max concurrency 46.38, GPU NVIDIA H200");
}

TEST_CASE("vLLM V0 log: old backend names normalized, terminal colors ignored") {
  const json log = parse("vllm-v0-xformers.log");
  const json& f = log["facts"];
  CHECK(log["engine"] == "vllm");
  CHECK(f["version"] == "0.5.0.post1");
  CHECK(f["attention_backend"] == "XFORMERS");  // "Cannot use FlashAttention-2 backend" is not a selection
  CHECK(log["evidence"]["attention_backend"]["raw"] == "XFormers");
  CHECK(f["kv_cache_dtype"] == "fp8");
  CHECK(f["revision"].is_null());  // revision=None: recorded as unset
  CHECK(f["tensor_parallel"] == 2);
  CHECK_FALSE(f.contains("kv_cache_tokens"));  // V0 logs blocks, not tokens
  CHECK_FALSE(f.contains("kv_scales"));        // not in the log: never inferred
}

TEST_CASE("SGLang log: server args, the default backend it chose, allocated dtype, final capacity") {
  const json log = parse("sglang-fa3.log");
  const json& f = log["facts"];
  CHECK(log["engine"] == "sglang");
  CHECK(f["model"] == "Qwen/Qwen3-8B");
  CHECK(f["revision"].is_null());
  CHECK(f["attention_backend"] == "FA3");
  CHECK(f["kv_cache_dtype"] == "fp8_e4m3");
  CHECK(f["kv_cache_dtype_allocated"] == "torch.float8_e4m3fn");
  CHECK(f["kv_scales"] == "default_1.0");
  CHECK(f["kv_cache_tokens"] == 2401024);
  CHECK(f["max_concurrency"] == 4096);
  CHECK(f["max_model_len"] == 40960);
  CHECK(f["tensor_parallel"] == 2);
  CHECK_FALSE(f.contains("version"));  // SGLang does not log its version: the endpoint probe has it
  CHECK(log["evidence"]["kv_cache_tokens"]["pattern"] == "sglang/final_capacity");
  CHECK_FALSE(has(log.dump(), "SECRET"));
  CHECK(log["notes"].empty());  // two ranks repeating the same lines are not a conflict
}

TEST_CASE("TensorRT-LLM log: version, attn_backend, fp8, the last KV allocation is the capacity") {
  const json log = parse("trtllm-pytorch.log");
  const json& f = log["facts"];
  CHECK(log["engine"] == "tensorrt_llm");
  CHECK(f["version"] == "1.1.0rc3");
  CHECK(f["attention_backend"] == "TRTLLM");
  CHECK(f["kv_cache_dtype"] == "fp8");
  CHECK(f["kv_cache_tokens"] == 1397376);
  CHECK(f["kv_cache_gib"].get<double>() == kvtest::Approx(95.95));
  CHECK(f["max_concurrency"] == 256);
  CHECK(f["max_model_len"] == 32768);
  CHECK(f["gpu_memory_gib"].get<double>() == kvtest::Approx(139.8));
}

TEST_CASE("Unknown lines are ignored; a log with nothing known is a warning, not an error") {
  const json log = parse("unknown.log");
  CHECK(log["engine"].is_null());
  CHECK(log["facts"].empty());
  REQUIRE(log["warnings"].size() == 1);
  CHECK(has(log["warnings"][0].get<std::string>(), "no line of a vLLM, SGLang or TensorRT-LLM startup log"));
  const json empty = provenance::parse_engine_log_text("", "empty.log");
  CHECK(empty["facts"].empty());
  CHECK(empty["warnings"].size() == 1);
}

TEST_CASE("Lines of the same format that disagree are noted, the first kept; a missing file is an Error") {
  const json log = provenance::parse_engine_log_text(
      "INFO [cuda.py:1] Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN']\n"
      "INFO [cuda.py:1] Using TRITON_ATTN attention backend out of potential backends: ['TRITON_ATTN']\r\n",
      "two.log");
  CHECK(log["facts"]["attention_backend"] == "FLASH_ATTN");
  REQUIRE(log["notes"].size() == 2);  // the backend and its candidate list
  CHECK(has(log["notes"][0].get<std::string>(), "attention_backend: kept \"FLASH_ATTN\" (line 1"));
  CHECK(has(log["notes"][0].get<std::string>(), "line 2 says \"TRITON_ATTN\""));
  CHECK(log["facts"]["attention_backend_candidates"] == "['FLASH_ATTN']");
  try {
    provenance::parse_engine_log(kDir + "no-such.log");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.exit_code() == 2);
    CHECK(has(e.what(), "no-such.log"));
  }
}

TEST_CASE("A log matching two engines' formats takes facts from the one with more line formats, and warns") {
  const json log = provenance::parse_engine_log_text(
      "vLLM API server version 0.10.2\nGPU KV cache size: 1,000 tokens\n[TensorRT-LLM] TensorRT-LLM version: 1.0.0\n",
      "mixed.log");
  CHECK(log["engine"] == "vllm");
  CHECK(log["facts"]["version"] == "0.10.2");
  REQUIRE(log["warnings"].size() == 1);
  CHECK(has(log["warnings"][0].get<std::string>(), "several engines"));
}

TEST_CASE("docs/engine-log.md names every field and every pattern of the table") {
  const std::string doc = kvtest::read_text("docs/engine-log.md");
  std::set<std::string> fields;
  for (const json& p : provenance::engine_log_pattern_table()["patterns"]) {
    CHECK(has(doc, "`" + p["id"].get<std::string>() + "`"));
    if (p.contains("field")) fields.insert(p["field"]);
    for (const json& c : p.value("captures", json::array())) fields.insert(c["field"]);
  }
  for (const std::string& f : fields) {
    INFO(f);
    CHECK(has(doc, "`" + f + "`"));
  }
}

TEST_CASE("Cut-off bytes in a log never reach a fact: every writer can dump the result") {
  const json log = provenance::parse_engine_log_text("vLLM API server version 0.19\xff\xfe\nmodel='\xc3'\n", "bytes.log");
  REQUIRE(log["facts"].contains("version"));
  CHECK(log["facts"]["version"] == "0.19");  // invalid UTF-8 matches no pattern item (PCRE2 in UTF mode)
  CHECK_NOTHROW(log.dump());  // the strict default handler would throw on invalid UTF-8
}
