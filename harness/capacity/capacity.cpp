#include "harness/capacity/capacity.h"

#include <cmath>

#include "harness/core/error.h"
#include "kernels/kv_format.h"

namespace kvgate::capacity {

namespace {

void check(bool ok, const std::string& message) {
  if (!ok) throw Error(message);
}

}  // namespace

CapacityRow plan_capacity(const ModelDims& model, const kernels::KvStoreOptions& format, const CapacityOptions& o) {
  check(o.gpu_mem_gb > 0 && std::isfinite(o.gpu_mem_gb), "--gpu-mem-gb must be positive (an H200 has 141)");
  check(o.mem_util > 0 && o.mem_util <= 1, "--mem-util must be in (0, 1] (vLLM's default is 0.92)");
  check(o.overhead_gb >= 0 && std::isfinite(o.overhead_gb), "--overhead-gb must be zero or more");
  check(!o.weights_gb || (*o.weights_gb >= 0 && std::isfinite(*o.weights_gb)), "--weights-gb must be zero or more");
  check(o.seq_len > 0, "--seq-len must be positive");
  check(o.block_size > 0, "--block-size must be positive");
  check(o.tp > 0, "--tp must be positive");
  check(model.kv_heads % o.tp == 0 || o.tp % model.kv_heads == 0,
        "--tp " + std::to_string(o.tp) + ": the model's " + std::to_string(model.kv_heads) +
            " KV heads neither split evenly over it nor replicate evenly; use a divisor or a multiple of " +
            std::to_string(model.kv_heads));

  CapacityRow row;
  row.format = format.format;
  // The whole model's record (parameters, skip layers) and one GPU's share of the heads.
  const kernels::KvFormatSpec whole = kernels::resolve_kv_format(format, model.kv_shape());
  row.kv = whole.record();
  row.layout = whole.layout;
  row.kv_heads_per_gpu = model.kv_heads >= o.tp ? model.kv_heads / o.tp : 1;
  const kernels::KvFormatSpec per_gpu =
      kernels::resolve_kv_format(format, kernels::KvShape{model.layers, row.kv_heads_per_gpu, model.head_dim});
  row.bytes_per_token = per_gpu.bytes_per_token();
  const long long blocks = (o.seq_len + o.block_size - 1) / o.block_size;
  row.bytes_per_sequence = per_gpu.bytes_for_sequence(blocks * o.block_size);

  row.usable_bytes = o.gpu_mem_gb * 1e9 * o.mem_util;
  if (o.weights_gb) {
    row.weights_bytes = *o.weights_gb * 1e9 / o.tp;
    row.weights_source = "--weights-gb";
  } else {
    row.weights_bytes = model.weight_bytes(o.weights_dtype) / o.tp;
    row.weights_source = "config.json, " + o.weights_dtype;
  }
  row.overhead_bytes = o.overhead_gb * 1e9;
  row.kv_budget_bytes = row.usable_bytes - row.weights_bytes - row.overhead_bytes;
  if (row.kv_budget_bytes > 0) {
    const double per_block = row.bytes_per_token * o.block_size;
    row.tokens = static_cast<long long>(std::floor(row.kv_budget_bytes / per_block)) * o.block_size;
    row.sequences = static_cast<long long>(std::floor(row.kv_budget_bytes / row.bytes_per_sequence));
  }
  return row;
}

nlohmann::json capacity_json(const CapacityRow& r, const ModelDims& m, const CapacityOptions& o) {
  return {{"format", r.format},
          {"kv", r.kv},
          {"layout", r.layout},
          {"bytes_per_token", r.bytes_per_token},
          {"bytes_per_sequence", r.bytes_per_sequence},
          {"seq_len", o.seq_len},
          {"kv_budget_bytes", r.kv_budget_bytes},
          {"tokens", r.tokens},
          {"sequences", r.sequences},
          {"usable_bytes", r.usable_bytes},
          {"weights_bytes", r.weights_bytes},
          {"weights_source", r.weights_source},
          {"overhead_bytes", r.overhead_bytes},
          {"gpu_mem_gb", o.gpu_mem_gb},
          {"mem_util", o.mem_util},
          {"tp", o.tp},
          {"block_size", o.block_size},
          {"kv_heads_per_gpu", r.kv_heads_per_gpu},
          {"model",
           {{"name", m.name},
            {"layers", m.layers},
            {"kv_heads", m.kv_heads},
            {"head_dim", m.head_dim},
            {"params", m.params()}}}};
}

}  // namespace kvgate::capacity
