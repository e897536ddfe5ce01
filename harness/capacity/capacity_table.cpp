// The human-readable output of `kvgate capacity`.
#include <cstdio>
#include <string>

#include "harness/capacity/capacity.h"

namespace kvgate::capacity {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string thousands(long long v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string pad_left(const std::string& s, std::size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }
std::string pad_right(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

}  // namespace

std::string capacity_table(const std::vector<CapacityRow>& rows, const ModelDims& m, const CapacityOptions& o, bool layouts) {
  if (rows.empty()) return "";
  const CapacityRow& first = rows.front();
  std::string out = m.name + ": " + std::to_string(m.layers) + " layers, " + std::to_string(m.kv_heads) + " KV heads x " +
                    std::to_string(m.head_dim) + " (" + std::to_string(first.kv_heads_per_gpu) + " per GPU at TP " +
                    std::to_string(o.tp) + "), " + fmt("%.2f", m.params() / 1e9) + "B parameters\n";
  out += "KV budget per GPU: " + fmt("%.2f", o.gpu_mem_gb) + " GB x " + fmt("%.2f", o.mem_util) + " = " +
         fmt("%.2f", first.usable_bytes / 1e9) + " GB - weights " + fmt("%.2f", first.weights_bytes / 1e9) + " GB (" +
         first.weights_source + ") - overhead " + fmt("%.2f", first.overhead_bytes / 1e9) + " GB = " +
         fmt("%.2f", first.kv_budget_bytes / 1e9) + " GB\n";
  if (first.kv_budget_bytes <= 0)
    out += "The weights and the overhead take all the usable memory: nothing is left for the KV cache.\n";
  out += "Sequences of " + thousands(o.seq_len) + " tokens" +
         (o.block_size > 1 ? ", cache blocks of " + std::to_string(o.block_size) + " tokens" : std::string()) + ".\n\n";
  out += pad_right("format", 22) + pad_left("bytes/token", 14) + pad_left("per sequence", 15) + pad_left("tokens", 14) +
         pad_left("sequences", 11) + pad_left("vs bf16", 9) + "\n";
  const double bf16 = 4.0 * m.layers * first.kv_heads_per_gpu * m.head_dim;
  for (const auto& r : rows) {
    out += pad_right(r.format, 22) + pad_left(fmt("%.2f KiB", r.bytes_per_token / 1024), 14) +
           pad_left(fmt("%.2f GB", r.bytes_per_sequence / 1e9), 15) + pad_left(thousands(r.tokens), 14) +
           pad_left(thousands(r.sequences), 11) + pad_left(fmt("%.2fx", bf16 / r.bytes_per_token), 9) + "\n";
    const auto& skip = r.kv.value("skip_layers", nlohmann::json::array());
    if (!skip.empty()) out += pad_right("", 22) + "  (layers " + skip.dump() + " in bf16)\n";
    if (layouts) out += pad_right("", 22) + "  layout: " + r.layout + "\n";
  }
  return out;
}

}  // namespace kvgate::capacity
