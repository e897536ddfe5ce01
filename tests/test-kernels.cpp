// test-kernels: every CUDA kernel against its CPU twin, and every CPU twin against an fp64
// reference, in one table of cases (style.md §1, after llama.cpp's test-backend-ops).
//
//   test-kernels test [--cpu-only] [-o OP] [-p REGEX]   run the cases (exit 1 on any failure)
//   test-kernels list                                   list the cases
//
// A case has typed parameters, a vars() name, its own error bound (normalized mean squared error,
// NMSE = mse(out, ref) / mse(ref, 0)), fresh random inputs each run, outputs poisoned before each
// run and guard elements around them. Without --cpu-only a GPU is required: its absence fails.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "cuda_info.h"
#include "hello.h"

namespace {

using kvgate::Rng;

// An output buffer with guard elements on both sides, poisoned before each run.
template <class T>
class Guarded {
 public:
  static constexpr std::size_t kGuard = 64;
  explicit Guarded(std::size_t n) : buf_(n + 2 * kGuard) { poison(); }
  T* data() { return buf_.data() + kGuard; }
  std::size_t size() const { return buf_.size() - 2 * kGuard; }
  void poison() { std::memset(static_cast<void*>(buf_.data()), 0xFF, buf_.size() * sizeof(T)); }  // NaN for floats
  bool guards_intact() const {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(buf_.data());
    const std::size_t gb = kGuard * sizeof(T), total = buf_.size() * sizeof(T);
    for (std::size_t i = 0; i < gb; ++i)
      if (p[i] != 0xFF || p[total - 1 - i] != 0xFF) return false;
    return true;
  }

 private:
  std::vector<T> buf_;
};

struct KernelCase {
  virtual ~KernelCase() = default;
  virtual std::string op() const = 0;
  virtual std::string vars() const = 0;
  virtual double max_nmse_twin() const { return 1e-12; }  // CPU twin vs fp64 reference
  virtual double max_nmse_gpu() const { return 1e-7; }    // GPU vs CPU twin
  virtual void init(Rng& rng) = 0;                        // fresh random inputs
  virtual std::vector<double> reference() = 0;            // fp64, from the formula
  // The twin's and the kernel's outputs; false when an output was not fully written or a guard was hit.
  virtual bool cpu(std::vector<double>& out) = 0;
  virtual bool gpu(std::vector<double>& out) = 0;
  std::string name() const { return op() + "(" + vars() + ")"; }
};

// ---- hello: y = a*x + y -------------------------------------------------------------------
struct AxpyCase final : KernelCase {
  std::size_t n;
  float a = 0;
  std::vector<float> x, y0;
  explicit AxpyCase(std::size_t n_) : n(n_) {}
  std::string op() const override { return "AXPY"; }
  std::string vars() const override { return "n=" + std::to_string(n); }
  void init(Rng& rng) override {
    a = static_cast<float>(rng.uniform() * 4 - 2);
    x.resize(n);
    y0.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(rng.normal());
      y0[i] = static_cast<float>(rng.normal());
    }
  }
  std::vector<double> reference() override {
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = static_cast<double>(a * x[i]) + y0[i];  // fp32 product, as the kernel
    return r;
  }
  bool run(std::vector<double>& out, bool on_gpu) {
    Guarded<float> y(n);
    std::memcpy(y.data(), y0.data(), n * sizeof(float));  // y is read-modify-write: start from the input
    if (on_gpu)
      kvgate::kernels::axpy_cuda(a, x.data(), y.data(), n);
    else
      kvgate::kernels::axpy_ref(a, x.data(), y.data(), n);
    out.assign(y.data(), y.data() + n);
    return y.guards_intact();
  }
  bool cpu(std::vector<double>& out) override { return run(out, false); }
  bool gpu(std::vector<double>& out) override { return run(out, true); }
};

std::vector<std::unique_ptr<KernelCase>> make_test_cases() {
  std::vector<std::unique_ptr<KernelCase>> cases;
  for (std::size_t n : {1u, 255u, 4097u, 1000003u}) cases.push_back(std::make_unique<AxpyCase>(n));
  return cases;
}

// NMSE after NaN/inf checks: NaN anywhere (or inf where the reference has none) fails.
double nmse(const std::vector<double>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(out[i]) != std::isnan(ref[i])) return INFINITY;
    if (std::isinf(out[i]) || std::isinf(ref[i])) {
      if (out[i] != ref[i]) return INFINITY;
      continue;
    }
    if (std::isnan(ref[i])) continue;
    err += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return norm == 0 ? err : err / norm;
}

int usage() {
  std::fprintf(stderr, "usage: test-kernels test [--cpu-only] [-o OP] [-p REGEX] | test-kernels list\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  bool cpu_only = false;
  std::string op_filter, pattern;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cpu-only") cpu_only = true;
    else if (a == "-o" && i + 1 < argc) op_filter = argv[++i];
    else if (a == "-p" && i + 1 < argc) pattern = argv[++i];
    else return usage();
  }
  auto cases = make_test_cases();
  if (mode == "list") {
    for (auto& c : cases) std::printf("%s\n", c->name().c_str());
    return 0;
  }
  if (mode != "test") return usage();
  const bool gpu = !cpu_only;
  if (gpu && kvgate::kernels::cuda_device_count() == 0) {
    std::fprintf(stderr, "test-kernels: no GPU (%s); run with --cpu-only to check the CPU twins alone\n",
                 kvgate::kernels::cuda_describe().c_str());
    return 1;
  }
  const std::regex re(pattern.empty() ? ".*" : pattern);
  Rng rng(20261129);
  int run = 0, failed = 0;
  for (auto& c : cases) {
    if (!op_filter.empty() && c->op() != op_filter) continue;
    if (!std::regex_search(c->name(), re)) continue;
    c->init(rng);
    const std::vector<double> ref = c->reference();
    std::vector<double> twin, dev;
    std::string verdict = "OK";
    try {
      if (!c->cpu(twin)) verdict = "FAIL (twin wrote outside its output)";
      else if (double e = nmse(twin, ref); !(e <= c->max_nmse_twin()))
        verdict = "FAIL (twin NMSE " + std::to_string(e) + " > " + std::to_string(c->max_nmse_twin()) + ")";
      else if (gpu) {
        if (!c->gpu(dev)) verdict = "FAIL (kernel wrote outside its output)";
        else if (double g = nmse(dev, twin); !(g <= c->max_nmse_gpu()))
          verdict = "FAIL (GPU NMSE " + std::to_string(g) + " > " + std::to_string(c->max_nmse_gpu()) + ")";
      }
    } catch (const std::exception& e) {
      verdict = std::string("FAIL (") + e.what() + ")";
    }
    ++run;
    failed += verdict != "OK";
    std::printf("  %-40s %s %s\n", c->name().c_str(), gpu ? "[cpu+gpu]" : "[cpu]", verdict.c_str());
  }
  std::printf("%d/%d cases passed%s\n", run - failed, run, gpu ? "" : " (CPU twins only)");
  return failed == 0 && run > 0 ? 0 : 1;
}
