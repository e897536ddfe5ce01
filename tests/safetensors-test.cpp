// safetensors parsing and checkpoint loading: good files load (single, sharded, each dtype), hostile
// ones are rejected with an error that names the file, the tensor and the problem.
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/decoder/make_model.h"
#include "harness/decoder/model.h"
#include "harness/decoder/safetensors.h"
#include "kernels/float_formats.h"
#include "tests/test_util.h"

using namespace kvgate::decoder;
using kvtest::contains;
using nlohmann::json;

namespace {

// A file from a header (dumped as is) and a data section.
std::string raw_file(const std::string& header, const std::string& data) {
  std::string out;
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + header + data;
}

SafetensorsHeader parse(const std::string& bytes) {
  return parse_safetensors_header(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), bytes.size(), "x.safetensors");
}

void require_rejected(const std::string& bytes, const std::string& message) {
  INFO(message);
  REQUIRE_THROWS_WITH(parse(bytes), contains("x.safetensors") && contains(message));
}

}  // namespace

TEST_CASE("safetensors: the writer's files parse back with their shapes, dtypes and values", "[safetensors]") {
  const std::vector<float> a = {1.0f, -2.5f, 3.25f, 0.1f, 1e-3f, 65504.0f};
  const std::vector<float> b = {7.0f, 8.0f};
  const std::string bytes = serialize_safetensors(
      {{"a", "BF16", {2, 3}, a.data()}, {"b", "F32", {2}, b.data()}, {"c", "F16", {6}, a.data()}}, {{"format", "pt"}});
  const SafetensorsHeader h = parse(bytes);
  REQUIRE(h.tensors.size() == 3);
  CHECK(h.metadata["format"] == "pt");
  CHECK(h.data_start % 8 == 0);  // the header is padded so data is aligned
  CHECK(h.tensors[0].name == "a");
  CHECK(h.tensors[0].shape == std::vector<std::int64_t>{2, 3});
  CHECK(h.tensors[1].name == "b");
  CHECK(h.tensors[1].begin == 12);
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data()) + h.data_start;
  for (int i = 0; i < 6; ++i) {
    const std::uint16_t bf = static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
    CHECK(kvgate::kernels::bf16_to_f32(bf) == kvgate::kernels::bf16_to_f32(kvgate::kernels::f32_to_bf16(a[i])));
    const std::uint16_t h16 = static_cast<std::uint16_t>(p[20 + 2 * i] | (p[20 + 2 * i + 1] << 8));
    CHECK(kvgate::kernels::f16_to_f32(h16) == kvgate::kernels::f16_to_f32(kvgate::kernels::f32_to_f16(a[i])));
  }
  float f;
  std::memcpy(&f, p + 16, 4);
  CHECK(f == 8.0f);
}

TEST_CASE("safetensors: hostile headers are rejected with a clear error", "[safetensors]") {
  const std::string ok_header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  REQUIRE_NOTHROW(parse(raw_file(ok_header, std::string(8, '\0'))));

  SECTION("shorter than the length field") { require_rejected("abc", "shorter than the 8-byte header length"); }
  SECTION("header length beyond the file") {
    std::string f = raw_file(ok_header, std::string(8, '\0'));
    f[0] = static_cast<char>(0xff);
    f[1] = static_cast<char>(0x7f);
    require_rejected(f, "runs past the end of the file");
  }
  SECTION("header length absurd") {
    std::string f = raw_file(ok_header, std::string(8, '\0'));
    for (int i = 0; i < 8; ++i) f[i] = static_cast<char>(0xff);
    require_rejected(f, "over the 100 MB limit");
  }
  SECTION("not JSON") { require_rejected(raw_file("{\"w\": [1,", ""), "not valid JSON"); }
  SECTION("not an object") { require_rejected(raw_file("[1,2,3]", ""), "JSON object"); }
  SECTION("unknown dtype") {
    require_rejected(raw_file(R"({"w":{"dtype":"F7","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')),
                     "tensor \"w\": unknown dtype \"F7\"");
  }
  SECTION("shape and size disagree") {
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
                     "shape and dtype make 12 bytes but data_offsets span 8");
  }
  SECTION("offsets past the end") {
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, '\0')),
                     "run past the end of the file");
  }
  SECTION("end before begin") {
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", std::string(8, '\0')),
                     "is before begin");
  }
  SECTION("overlapping tensors") {
    require_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                              std::string(12, '\0')),
                     "overlap");
  }
  SECTION("a hole in the data") {
    require_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0')),
                     "belong to no tensor");
  }
  SECTION("trailing bytes") {
    require_rejected(raw_file(ok_header, std::string(12, '\0')), "trailing bytes or a truncated file");
  }
  SECTION("negative or fractional numbers") {
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", std::string(8, '\0')),
                     "non-negative integer");
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8.5]}})", std::string(8, '\0')),
                     "non-negative integer");
  }
  SECTION("a shape whose element count overflows") {
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                              std::string(8, '\0')),
                     "impossibly large");
  }
  SECTION("a name twice") {
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              std::string(8, '\0')),
                     "appears twice");
  }
  SECTION("missing fields and bad metadata") {
    require_rejected(raw_file(R"({"w":{"dtype":"F32","shape":[2]}})", std::string(8, '\0')), "\"data_offsets\" missing");
    require_rejected(raw_file(R"({"__metadata__":{"format":1}})", ""), "__metadata__ value \"format\" must be a string");
  }
}

TEST_CASE("checkpoint: single and sharded checkpoints load to the same weights", "[safetensors]") {
  kvtest::TempDir tmp;
  MakeModelOptions o;
  o.arch = "qwen3";
  o.merges = 16;
  o.dtype = "fp32";
  make_model(o, tmp.file("single"));
  o.shards = 3;
  make_model(o, tmp.file("sharded"));
  CHECK(std::filesystem::exists(tmp.file("sharded/model-00002-of-00003.safetensors")));
  CHECK(!std::filesystem::exists(tmp.file("sharded/model.safetensors")));
  auto a = Model::load(tmp.file("single")), b = Model::load(tmp.file("sharded"));
  const auto& c = a->config();
  CHECK(a->parameter_count() == b->parameter_count());
  CHECK(std::equal(a->embed(), a->embed() + std::size_t(c.vocab_size) * c.hidden_size, b->embed()));
  const auto& la = a->layer(1);
  const auto& lb = b->layer(1);
  CHECK(std::equal(la.down, la.down + std::size_t(c.hidden_size) * c.intermediate_size, lb.down));
  CHECK(std::equal(la.k_norm, la.k_norm + c.head_dim, lb.k_norm));
  CHECK(a->lm_head() == a->embed());  // tied
}

TEST_CASE("checkpoint: bf16 and fp16 weights widen exactly", "[safetensors]") {
  kvtest::TempDir tmp;
  MakeModelOptions o;
  o.merges = 8;
  o.dtype = "fp32";
  make_model(o, tmp.file("f32"));
  o.dtype = "bf16";
  make_model(o, tmp.file("bf16"));
  o.dtype = "fp16";
  make_model(o, tmp.file("fp16"));
  auto f = Model::load(tmp.file("f32")), b = Model::load(tmp.file("bf16")), h = Model::load(tmp.file("fp16"));
  const std::size_t n = std::size_t(f->config().intermediate_size) * f->config().hidden_size;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = f->layer(0).gate[i];
    REQUIRE(b->layer(0).gate[i] == kvgate::kernels::bf16_to_f32(kvgate::kernels::f32_to_bf16(x)));
    REQUIRE(h->layer(0).gate[i] == kvgate::kernels::f16_to_f32(kvgate::kernels::f32_to_f16(x)));
  }
}

TEST_CASE("checkpoint: loading errors name the file and the fix", "[safetensors]") {
  kvtest::TempDir tmp;
  MakeModelOptions o;
  o.merges = 8;
  const std::string dir = tmp.file("m");
  make_model(o, dir);
  SECTION("no weights") {
    std::filesystem::remove(dir + "/model.safetensors");
    REQUIRE_THROWS_WITH(Model::load(dir), contains("no model.safetensors or model.safetensors.index.json"));
  }
  SECTION("no config") {
    std::filesystem::remove(dir + "/config.json");
    REQUIRE_THROWS_WITH(Model::load(dir), contains("no config.json"));
  }
  SECTION("truncated weights") {
    const std::string st = kvtest::read_text(dir + "/model.safetensors");
    kvtest::write_text(dir + "/model.safetensors", st.substr(0, st.size() - 100));
    REQUIRE_THROWS_WITH(Model::load(dir), contains("model.safetensors") && contains("truncated"));
  }
  SECTION("a missing tensor") {
    json cfg = json::parse(kvtest::read_text(dir + "/config.json"));
    cfg["num_hidden_layers"] = 3;
    kvtest::write_text(dir + "/config.json", cfg.dump());
    REQUIRE_THROWS_WITH(Model::load(dir), contains("\"model.layers.2.input_layernorm.weight\" is missing"));
  }
  SECTION("a shape that disagrees with config.json") {
    json cfg = json::parse(kvtest::read_text(dir + "/config.json"));
    cfg["intermediate_size"] = 100;
    kvtest::write_text(dir + "/config.json", cfg.dump());
    REQUIRE_THROWS_WITH(Model::load(dir), contains("mlp.gate_proj.weight\" has shape [128, 64] but config.json implies [100, 64]"));
  }
  SECTION("untied without lm_head") {
    json cfg = json::parse(kvtest::read_text(dir + "/config.json"));
    cfg["tie_word_embeddings"] = false;
    kvtest::write_text(dir + "/config.json", cfg.dump());
    REQUIRE_THROWS_WITH(Model::load(dir), contains("\"lm_head.weight\" is missing"));
  }
  SECTION("an index naming a shard outside the directory, or a missing tensor") {
    std::filesystem::rename(dir + "/model.safetensors", dir + "/model-00001-of-00001.safetensors");
    kvtest::write_text(dir + "/model.safetensors.index.json",
                       R"({"weight_map":{"model.norm.weight":"../model-00001-of-00001.safetensors"}})");
    REQUIRE_THROWS_WITH(Model::load(dir), contains("must be a plain file name"));
    kvtest::write_text(dir + "/model.safetensors.index.json",
                       R"({"weight_map":{"model.nope":"model-00001-of-00001.safetensors"}})");
    REQUIRE_THROWS_WITH(Model::load(dir), contains("\"model.nope\" is listed in model-00001-of-00001.safetensors but no shard holds it"));
    kvtest::write_text(dir + "/model.safetensors.index.json", R"({"weight_map":{"model.norm.weight":"model-9.safetensors"}})");
    REQUIRE_THROWS_WITH(Model::load(dir), contains("shard model-9.safetensors is missing"));
  }
  SECTION("integer weights") {
    // Replace the file with one whose norm tensor is declared I32: the loader refuses the dtype.
    std::string st = kvtest::read_text(dir + "/model.safetensors");
    const std::uint64_t n = static_cast<std::uint64_t>(static_cast<unsigned char>(st[0])) |
                            (static_cast<std::uint64_t>(static_cast<unsigned char>(st[1])) << 8) |
                            (static_cast<std::uint64_t>(static_cast<unsigned char>(st[2])) << 16);
    std::string header = st.substr(8, n);
    const std::size_t at = header.find("\"model.norm.weight\":{\"data_offsets\"");
    REQUIRE(at != std::string::npos);
    const std::size_t d = header.find("\"dtype\":\"BF16\"", at);
    header.replace(d, 14, "\"dtype\":\"I16\" ");
    kvtest::write_text(dir + "/model.safetensors", st.substr(0, 8) + header + st.substr(8 + n));
    REQUIRE_THROWS_WITH(Model::load(dir), contains("\"model.norm.weight\" has dtype I16; the reference decoder reads F32, BF16 or F16"));
  }
}
