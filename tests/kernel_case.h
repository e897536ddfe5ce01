// The case harness of test-kernels (tests/test-kernels*.cpp): a case has typed parameters, fresh
// random inputs, an fp64 reference, a CPU twin and (in a CUDA build) a GPU kernel; outputs are
// poisoned before each run and guarded on both sides. Device helpers for the GPU side.
#pragma once
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/rng.h"
#if defined(KVGATE_HAVE_CUDA)
#include "kernels/cuda_check.cuh"
#endif

namespace kcase {

// Whether this build has CUDA kernels to check against their CPU twins.
#if defined(KVGATE_HAVE_CUDA)
constexpr bool kCuda = true;
#else
constexpr bool kCuda = false;
#endif
// What a case writes over an output element that a check found wrong, so the comparison fails.
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

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
  // False while a CPU twin has no CUDA kernel yet: a GPU run reports it as such, never as checked.
  virtual bool has_gpu() const { return true; }
  std::string name() const { return op() + "(" + vars() + ")"; }
};

// NMSE after NaN/inf checks: NaN anywhere (or inf where the reference has none) fails.
inline double nmse(const std::vector<double>& out, const std::vector<double>& ref) {
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

inline void fill_normal(Rng& rng, std::vector<float>& v, double scale = 1.0, double mean = 0.0) {
  for (auto& x : v) x = static_cast<float>(mean + scale * rng.normal());
}

template <class T>
bool copy_out(Guarded<T>& g, std::size_t n, std::vector<double>& out) {
  out.assign(g.data(), g.data() + n);
  return g.guards_intact();
}

#if defined(KVGATE_HAVE_CUDA)
// A device copy of a host vector, or a device buffer poisoned with 0xFF bytes (NaN for floats).
template <class T>
std::unique_ptr<kvgate::kernels::DeviceBuffer<T>> to_device(const std::vector<T>& v) {
  auto b = std::make_unique<kvgate::kernels::DeviceBuffer<T>>(v.size());
  if (!v.empty()) b->upload(v.data());
  return b;
}
template <class T>
std::unique_ptr<kvgate::kernels::DeviceBuffer<T>> poisoned_device(std::size_t n) {
  auto b = std::make_unique<kvgate::kernels::DeviceBuffer<T>>(n);
  KV_CUDA_CHECK(cudaMemset(b->get(), 0xFF, n * sizeof(T)));
  return b;
}
// A device output with guard elements on both sides, all poisoned with 0xFF bytes: Guarded's
// device side, so a kernel's out-of-bounds write shows as a failure.
template <class T>
class DeviceGuarded {
 public:
  static constexpr std::size_t kGuard = Guarded<T>::kGuard;
  explicit DeviceGuarded(std::size_t n) : n_(n), buf_(n + 2 * kGuard) {
    KV_CUDA_CHECK(cudaMemset(buf_.get(), 0xFF, buf_.size() * sizeof(T)));
  }
  T* get() const { return buf_.get() + kGuard; }
  // The n outputs; false when a guard byte changed.
  bool download(std::vector<T>& out) const {
    std::vector<T> all(buf_.size());
    buf_.download(all.data());
    out.assign(all.begin() + kGuard, all.begin() + kGuard + n_);
    const auto* p = reinterpret_cast<const unsigned char*>(all.data());
    const std::size_t gb = kGuard * sizeof(T), total = all.size() * sizeof(T);
    for (std::size_t i = 0; i < gb; ++i)
      if (p[i] != 0xFF || p[total - 1 - i] != 0xFF) return false;
    return true;
  }

 private:
  std::size_t n_;
  kvgate::kernels::DeviceBuffer<T> buf_;
};
// Waits for the device and checks for execution errors of everything launched.
inline void device_sync() {
  KV_CUDA_CHECK(cudaGetLastError());
  KV_CUDA_CHECK(cudaDeviceSynchronize());
}
#endif

// Case lists of the other test-kernels files.
void add_kv_cases(std::vector<std::unique_ptr<KernelCase>>& cases);
void add_fused_cases(std::vector<std::unique_ptr<KernelCase>>& cases);

}  // namespace kcase
