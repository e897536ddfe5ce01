// safetensors: an 8-byte little-endian header length N, N bytes of JSON header
// {"__metadata__": {...}, name: {"dtype", "shape", "data_offsets": [begin, end]}}, then the data.
// The parser trusts nothing: a header longer than the file, offsets that overlap, leave holes or
// run past the end, unknown dtypes and shapes that disagree with their byte size are Errors naming
// the file, the tensor and the fix. Files are memory-mapped; tensors are views into the mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::decoder {

// Bytes per element of a safetensors dtype ("F32", "BF16", ...); 0 when unknown.
std::size_t dtype_size(const std::string& dtype);

struct TensorInfo {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // offsets into the data section
  std::int64_t numel() const;
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // in data order
  nlohmann::json metadata = nlohmann::json::object();
  std::uint64_t data_start = 0;     // 8 + N
};

// Parses and checks the header of a safetensors file of `file_size` bytes whose first `size` bytes
// are `data` (at least 8 + N of them, or the parse fails). `where` names the file in errors.
SafetensorsHeader parse_safetensors_header(const std::uint8_t* data, std::size_t size, std::uint64_t file_size,
                                           const std::string& where);

// A read-only memory mapping of a whole file.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

struct TensorView {
  std::string name, dtype, file;
  std::vector<std::int64_t> shape;
  const std::uint8_t* data = nullptr;
  std::size_t bytes = 0;
};

// The tensors of a checkpoint directory: model.safetensors, or the shards that
// model.safetensors.index.json names (each shard parsed and checked as above; every tensor the
// index lists must be in the shard it names; a name in two shards is an Error).
class Checkpoint {
 public:
  static std::unique_ptr<Checkpoint> open(const std::string& dir);
  const TensorView* find(const std::string& name) const;
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  std::vector<std::string> files() const;

 private:
  void add_file(const std::string& path);
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::map<std::string, TensorView> tensors_;
};

// One tensor to write: F32 floats stored as `dtype` (F32, BF16 or F16, rounded to nearest even).
struct TensorToWrite {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  const float* values = nullptr;
};
// The bytes of a safetensors file holding `tensors` in the given order (header padded to 8 bytes).
std::string serialize_safetensors(const std::vector<TensorToWrite>& tensors,
                                  const std::map<std::string, std::string>& metadata = {});

}  // namespace kvgate::decoder
