#include "harness/decoder/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "kernels/float_formats.h"

namespace kvgate::decoder {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxHeader = 100'000'000;  // the safetensors library's own limit
constexpr std::int64_t kMaxElements = std::int64_t{1} << 50;

std::uint64_t read_u64_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::uint64_t unsigned_field(const json& v, const std::string& where, const char* what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw Error(where + ": " + what + " must be a non-negative integer, got " + describe_json_value(v));
  return v.get<std::uint64_t>();
}

}  // namespace

std::size_t dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

std::int64_t TensorInfo::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

SafetensorsHeader parse_safetensors_header(const std::uint8_t* data, std::size_t size, std::uint64_t file_size,
                                           const std::string& where) {
  if (file_size < 8 || size < 8)
    throw Error(where + ": not a safetensors file (shorter than the 8-byte header length)");
  const std::uint64_t n = read_u64_le(data);
  if (n > kMaxHeader)
    throw Error(where + ": safetensors header length " + std::to_string(n) + " is over the 100 MB limit (corrupt file?)");
  if (n > file_size - 8)
    throw Error(where + ": safetensors header length " + std::to_string(n) + " runs past the end of the file (" +
                std::to_string(file_size) + " bytes): the file is truncated or not safetensors");
  if (n > size - 8) throw Error(where + ": safetensors header not fully read");
  if (n < 2 || data[8] != '{') throw Error(where + ": safetensors header must be a JSON object starting with '{'");
  const std::string text(reinterpret_cast<const char*>(data + 8), n);

  // Duplicate names would silently shadow each other: catch them while parsing.
  std::set<std::string> seen;
  std::string duplicate;
  json header;
  try {
    header = json::parse(text, [&](int depth, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::key && depth == 1) {
        const std::string key = parsed.get<std::string>();
        if (!seen.insert(key).second && duplicate.empty()) duplicate = key;
      }
      return true;
    });
  } catch (const json::exception& e) {
    throw Error(where + ": safetensors header is not valid JSON (" + e.what() + ")");
  }
  if (!duplicate.empty()) throw Error(where + ": tensor \"" + duplicate + "\" appears twice in the safetensors header");
  if (!header.is_object()) throw Error(where + ": safetensors header must be a JSON object");

  SafetensorsHeader h;
  h.data_start = 8 + n;
  const std::uint64_t data_size = file_size - h.data_start;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) throw Error(where + ": __metadata__ must be an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m)
        if (!m->is_string()) throw Error(where + ": __metadata__ value \"" + m.key() + "\" must be a string");
      h.metadata = *it;
      continue;
    }
    const std::string tw = where + ": tensor \"" + it.key() + "\"";
    const FieldReader f(*it, tw);
    TensorInfo t;
    t.name = it.key();
    t.dtype = f.str("dtype");
    const std::size_t esize = dtype_size(t.dtype);
    if (esize == 0)
      throw Error(tw + ": unknown dtype \"" + t.dtype + "\" (known: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL "
                  "F8_E4M3 F8_E5M2)");
    std::int64_t numel = 1;
    for (const json& d : f.array("shape")) {
      const std::uint64_t dim = unsigned_field(d, tw, "each shape entry");
      if (dim > static_cast<std::uint64_t>(kMaxElements) || (dim != 0 && numel > kMaxElements / static_cast<std::int64_t>(dim)))
        throw Error(tw + ": shape is impossibly large");
      t.shape.push_back(static_cast<std::int64_t>(dim));
      numel *= static_cast<std::int64_t>(dim);
    }
    const json& off = f.array("data_offsets");
    if (off.size() != 2) throw Error(tw + ": data_offsets must be [begin, end]");
    t.begin = unsigned_field(off[0], tw, "data_offsets[0]");
    t.end = unsigned_field(off[1], tw, "data_offsets[1]");
    if (t.end < t.begin) throw Error(tw + ": data_offsets end " + std::to_string(t.end) + " is before begin " + std::to_string(t.begin));
    if (t.end > data_size)
      throw Error(tw + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                  "] run past the end of the file (data section is " + std::to_string(data_size) +
                  " bytes): the file is truncated or corrupt");
    const std::uint64_t expect = static_cast<std::uint64_t>(numel) * esize;
    if (t.end - t.begin != expect)
      throw Error(tw + ": shape and dtype make " + std::to_string(expect) + " bytes but data_offsets span " +
                  std::to_string(t.end - t.begin));
    h.tensors.push_back(std::move(t));
  }
  // The data section must be covered exactly: no overlaps, no holes (as the safetensors library checks).
  std::sort(h.tensors.begin(), h.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t at = 0;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo& t : h.tensors) {
    if (t.begin < at)
      throw Error(where + ": tensors \"" + prev->name + "\" and \"" + t.name + "\" overlap (data_offsets)");
    if (t.begin > at)
      throw Error(where + ": bytes " + std::to_string(at) + ".." + std::to_string(t.begin) +
                  " of the data section belong to no tensor (a hole before \"" + t.name + "\")");
    at = t.end;
    prev = &t;
  }
  if (at != data_size)
    throw Error(where + ": the data section is " + std::to_string(data_size) + " bytes but the tensors cover " +
                std::to_string(at) + " (trailing bytes or a truncated file)");
  return h;
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot memory-map (" + std::strerror(err) + ")");
    }
    data_ = static_cast<const std::uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

std::unique_ptr<Checkpoint> Checkpoint::open(const std::string& dir) {
  namespace fs = std::filesystem;
  auto ck = std::unique_ptr<Checkpoint>(new Checkpoint());
  const std::string single = dir + "/model.safetensors", index = dir + "/model.safetensors.index.json";
  if (fs::exists(single)) {
    ck->add_file(single);
    return ck;
  }
  if (!fs::exists(index))
    throw Error("--model-dir " + dir +
                ": no model.safetensors or model.safetensors.index.json there (PyTorch .bin checkpoints are not "
                "supported: convert them to safetensors)");
  json j;
  try {
    j = json::parse(read_file(index));
  } catch (const json::parse_error& e) {
    throw Error(index + ": not valid JSON (" + e.what() + ")");
  }
  const FieldReader f(j, index);
  const json& map = f.object("weight_map");
  std::map<std::string, std::string> wanted;  // tensor -> shard
  std::set<std::string> shards;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->is_string()) throw Error(index + ": weight_map[\"" + it.key() + "\"] must be a file name");
    const std::string shard = it->get<std::string>();
    if (shard.empty() || shard.find('/') != std::string::npos || shard.find('\\') != std::string::npos ||
        shard == "." || shard == "..")
      throw Error(index + ": weight_map[\"" + it.key() + "\"] = \"" + shard +
                  "\" must be a plain file name in the checkpoint directory");
    wanted[it.key()] = shard;
    shards.insert(shard);
  }
  if (shards.empty()) throw Error(index + ": weight_map is empty");
  for (const std::string& s : shards) {
    const std::string path = dir + "/" + s;
    if (!fs::exists(path)) throw Error(index + ": shard " + s + " is missing from " + dir);
    ck->add_file(path);
  }
  for (const auto& [name, shard] : wanted) {
    const TensorView* t = ck->find(name);
    if (!t) throw Error(index + ": tensor \"" + name + "\" is listed in " + shard + " but no shard holds it");
    if (t->file != dir + "/" + shard)
      throw Error(index + ": tensor \"" + name + "\" is listed in " + shard + " but found in " + t->file);
  }
  return ck;
}

void Checkpoint::add_file(const std::string& path) {
  auto file = std::make_unique<MappedFile>(path);
  const SafetensorsHeader h = parse_safetensors_header(file->data(), file->size(), file->size(), path);
  for (const TensorInfo& t : h.tensors) {
    if (tensors_.count(t.name))
      throw Error(path + ": tensor \"" + t.name + "\" is also in " + tensors_[t.name].file + " (a name in two shards)");
    tensors_[t.name] = TensorView{.name = t.name,
                                  .dtype = t.dtype,
                                  .file = path,
                                  .shape = t.shape,
                                  .data = file->data() + h.data_start + t.begin,
                                  .bytes = static_cast<std::size_t>(t.end - t.begin)};
  }
  files_.push_back(std::move(file));
}

const TensorView* Checkpoint::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> Checkpoint::files() const {
  std::vector<std::string> out;
  for (const auto& f : files_) out.push_back(f->path());
  return out;
}

std::string serialize_safetensors(const std::vector<TensorToWrite>& tensors,
                                  const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t at = 0;
  for (const TensorToWrite& t : tensors) {
    const std::size_t esize = dtype_size(t.dtype);
    if (t.dtype != "F32" && t.dtype != "BF16" && t.dtype != "F16")
      throw Error("safetensors writer: dtype " + t.dtype + " is not one of F32, BF16, F16", kExitInternal);
    std::int64_t numel = 1;
    for (auto d : t.shape) numel *= d;
    const std::uint64_t bytes = static_cast<std::uint64_t>(numel) * esize;
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + at);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += text;
  for (const TensorToWrite& t : tensors) {
    std::int64_t numel = 1;
    for (auto d : t.shape) numel *= d;
    for (std::int64_t i = 0; i < numel; ++i) {
      const float x = t.values[i];
      if (t.dtype == "F32") {
        const std::uint32_t u = kernels::f32_bits(x);
        for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((u >> (8 * b)) & 0xff));
      } else {
        const std::uint16_t u = t.dtype == "BF16" ? kernels::f32_to_bf16(x) : kernels::f32_to_f16(x);
        out.push_back(static_cast<char>(u & 0xff));
        out.push_back(static_cast<char>(u >> 8));
      }
    }
  }
  return out;
}

}  // namespace kvgate::decoder
