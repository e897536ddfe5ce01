// harness/provenance: engine startup logs of vLLM (V1 and V0), SGLang, TensorRT-LLM and llama-server
// read into facts (excerpts in tests/fixtures/engine-logs, written from the engines' line formats;
// logs the engines really printed in tests/data/engine-logs), unknown lines ignored, a log with
// nothing known warns, secrets never copied, docs list every field.
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

// Real llama-server logs (tests/data/engine-logs/, sources in tests/data/README.md).
namespace {
json real(const std::string& name) { return provenance::parse_engine_log("tests/data/engine-logs/" + name); }
}  // namespace

TEST_CASE("llama-server default log (build 6934): build as /props build_info spells it, slots, model, address, GPU") {
  const json log = real("llamacpp-b6934-cuda-np4.log");
  const json& f = log["facts"];
  CHECK(log["engine"] == "llama.cpp");  // the name the endpoint probe gives it: pinning compares the two
  CHECK(f["version"] == "b6934-72545ce2b");
  CHECK(f["slots"] == 4);
  CHECK(f["kv_unified"] == "true");
  CHECK(f["model"] == "Qwen3VL-32B-Instruct-Q4_K_M.gguf");
  CHECK(f["listen_address"] == "127.0.0.1:8080");
  CHECK(f["gpu"] == "NVIDIA GeForce RTX 4060 Ti");
  CHECK_FALSE(f.contains("type_k"));  // the KV lines come at a verbose level only
  CHECK(log["warnings"].empty());
}

TEST_CASE("llama.cpp verbose context and KV lines: K and V types, flash attention, cells, per-sequence context") {
  const json log = real("llamacpp-lmstudio-q8_0-verbose.log");
  const json& f = log["facts"];
  CHECK(log["engine"] == "llama.cpp");
  CHECK(f["type_k"] == "q8_0");
  CHECK(f["type_v"] == "q8_0");
  CHECK(f["flash_attn"] == "enabled");
  CHECK(f["kv_cache_tokens"] == 16384);
  CHECK(f["kv_cache_mib"].get<double>() == kvtest::Approx(1224.0));
  CHECK(f["n_ctx"] == 16384);
  CHECK(f["n_ctx_per_seq"] == 16384);
  CHECK(f["max_model_len"] == 16384);
  CHECK(f["slots"] == 1);
  CHECK(f["kv_unified"] == "false");
  CHECK(provenance::facts_line(log) ==
        "llama.cpp, KV K q8_0 V q8_0, flash attention enabled, context 16,384 tokens per sequence (1 slot), KV cache 16,384 "
        "tokens");
}

TEST_CASE("llama.cpp older formats: KV self size, kv_cache_init types, --version; a draft model's lines are not the model") {
  const json draft = real("llamacpp-b44xx-q8_0-draft.log");
  CHECK(draft["engine"] == "llama.cpp");
  CHECK(draft["facts"]["type_k"] == "q8_0");
  CHECK(draft["facts"]["type_v"] == "q8_0");
  CHECK(draft["facts"]["kv_cache_tokens"] == 32768);
  CHECK(draft["facts"]["kv_cache_mib"].get<double>() == kvtest::Approx(4352.0));
  CHECK_FALSE(draft["facts"].contains("model"));  // "loading draft model" is the draft's
  const json old = real("llamacpp-b4202-verbose-q8_0.log");
  CHECK(old["facts"]["version"] == "b4202-9f912511");
  CHECK(old["facts"]["gpu"] == "NVIDIA GeForce RTX 4090");
  CHECK(old["notes"].empty());  // "version:" and "build:" agree
  const json lv5 = real("llamacpp-b9421-lv5.log");  // timestamps and level letters before the message
  CHECK(lv5["facts"]["version"] == "b9421-ed7be1568");
}

TEST_CASE("llama.cpp: flash attention `auto` resolved later wins; 1/0 normalized") {
  const json log = provenance::parse_engine_log_text(
      "llama_context: flash_attn    = auto\nllama_context: Flash Attention was auto, set to enabled\n", "fa.log");
  CHECK(log["facts"]["flash_attn"] == "enabled");
  const json old = provenance::parse_engine_log_text("llama_new_context_with_model: flash_attn = 0\n", "fa0.log");
  CHECK(old["facts"]["flash_attn"] == "disabled");
  // The ready line: as tools/server/tests/README.md shows it, and as newer builds print it (SRV_INF).
  const json ready = provenance::parse_engine_log_text("main: server is listening on http://127.0.0.1:8080 - starting the main loop\n",
                                                       "ready.log");
  CHECK(ready["engine"] == "llama.cpp");
  CHECK(ready["facts"]["listen_address"] == "http://127.0.0.1:8080");
  const json srv = provenance::parse_engine_log_text("srv          main: listening on http://127.0.0.1:8081\n", "srv.log");
  CHECK(srv["facts"]["listen_address"] == "http://127.0.0.1:8081");
}

TEST_CASE("Real vLLM V1 logs: 0.10.2 FlashInfer BF16, 0.11.0 FP8 config, 0.14.1 auto, the 0.16+ banner and arguments") {
  const json bf16 = real("vllm-0.10.2-flashinfer-bf16-a100.log");
  CHECK(bf16["engine"] == "vllm");
  CHECK(bf16["facts"]["attention_backend"] == "FLASHINFER");
  CHECK(bf16["facts"]["kv_cache_tokens"] == 652144);
  CHECK(bf16["facts"]["max_concurrency"].get<double>() == kvtest::Approx(159.21));
  CHECK(bf16["facts"]["max_concurrency_tokens_per_request"] == 4096);
  CHECK_FALSE(bf16["facts"].contains("kv_cache_dtype"));  // BF16 by default: the log does not say it

  const json fp8 = real("vllm-0.11.0-fp8-h100.log");  // the config line as pasted: wrapped, cut
  CHECK(fp8["facts"]["version"] == "0.11.0");
  CHECK(fp8["facts"]["model"] == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(fp8["facts"]["kv_cache_dtype"] == "fp8");
  CHECK(fp8["facts"]["max_model_len"] == 131072);
  CHECK(fp8["facts"]["tensor_parallel"] == 1);
  CHECK(fp8["facts"]["revision"].is_null());

  const json autodt = real("vllm-0.14.1-auto.log");
  CHECK(autodt["facts"]["version"] == "0.14.1");
  CHECK(autodt["facts"]["kv_cache_dtype"] == "auto");

  const json bf16kv = real("vllm-0.14.1-bf16-kv.log");
  CHECK(bf16kv["facts"]["version"] == "0.14.1");
  CHECK(bf16kv["facts"]["kv_cache_dtype"] == "bfloat16");  // from the arguments line
  CHECK(bf16kv["facts"]["max_model_len"] == 131072);        // "Using max model len"

  // 0.16 prints a banner instead of "vLLM API server version".
  const json v16 = real("vllm-0.16.0-fp8-v100.log");
  CHECK(v16["engine"] == "vllm");
  CHECK(v16["facts"]["version"] == "0.16.0");
  CHECK(v16["facts"]["model"] == "unsloth/Meta-Llama-3.1-8B-Instruct");
  CHECK(v16["facts"]["kv_cache_dtype"] == "fp8");
  CHECK(v16["facts"]["max_model_len"] == 4096);
  const json v26 = real("vllm-0.26.0-fp8-qwen3.log");
  CHECK(v26["facts"]["version"] == "0.26.0");
  CHECK(v26["facts"]["model"] == "Qwen/Qwen3-8B");
  CHECK(v26["facts"]["kv_cache_dtype"] == "fp8");
  CHECK(v26["facts"]["max_model_len"] == 40960);
  for (const json* log : {&bf16, &fp8, &autodt, &bf16kv, &v16, &v26}) CHECK((*log)["warnings"].empty());
}

TEST_CASE("Real SGLang lines: the final capacity line and the KV allocation line") {
  const json cap = real("sglang-final-capacity-2026.log");
  CHECK(cap["engine"] == "sglang");
  CHECK(cap["facts"]["kv_cache_tokens"] == 2086558);
  CHECK(cap["facts"]["max_concurrency"] == 33);
  CHECK(cap["facts"]["max_model_len"] == 256000);
  const json alloc = real("sglang-kv-allocated-tp4.log");
  CHECK(alloc["engine"] == "sglang");
  CHECK(alloc["facts"]["kv_cache_tokens"] == 367404);
  CHECK_FALSE(alloc["facts"].contains("kv_cache_dtype_allocated"));  // older lines name no dtype
}

TEST_CASE("Real TensorRT-LLM lines: 1.2 KV dtype validation, PyTorch-backend allocation, 0.19 version, 0.8 token count") {
  const json auto_kv = real("trtllm-1.2.0rc1-kv-auto.log");
  CHECK(auto_kv["engine"] == "tensorrt_llm");
  CHECK(auto_kv["facts"]["kv_cache_dtype"] == "auto");
  CHECK(auto_kv["facts"]["kv_scales"] == "checkpoint");
  const json alloc = real("trtllm-pytorch-kv-allocation.log");
  CHECK(alloc["facts"]["kv_cache_tokens"] == 3731744);
  CHECK(alloc["facts"]["kv_cache_gib"].get<double>() == kvtest::Approx(78.30));
  CHECK(real("trtllm-0.19.0-version.log")["facts"]["version"] == "0.19.0");
  CHECK(real("trtllm-0.8-tokens-in-paged-kv.log")["facts"]["kv_cache_tokens"] == 132608);  // no "total" before 0.9
}
