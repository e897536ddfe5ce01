// Eight fp32 lanes for the CPU twins (GCC/Clang vector extension, plain arrays elsewhere), and the
// fixed-order dot product built on them: lane j sums k = j (mod 8) in order, the lanes reduce as
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), then the k % 8 tail adds in order. The same additions in
// the same order on every instruction set (ISO C++ builds do not contract into FMA), so results are
// bit-identical between the baseline and AVX2 clones. CPU only: not for CUDA translation units.
#pragma once

namespace kvgate::kernels::cpu {

constexpr int kLanes = 8;

#if defined(__GNUC__)
typedef float Lanes __attribute__((vector_size(32)));
#define KV_ALWAYS_INLINE inline __attribute__((always_inline))
KV_ALWAYS_INLINE Lanes load_lanes(const float* p) {
  Lanes v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
KV_ALWAYS_INLINE void store_lanes(float* p, const Lanes& v) { __builtin_memcpy(p, &v, sizeof v); }
KV_ALWAYS_INLINE Lanes splat(float x) { return Lanes{x, x, x, x, x, x, x, x}; }
#else
struct Lanes {
  float l[kLanes];
  float operator[](int i) const { return l[i]; }
};
#define KV_ALWAYS_INLINE inline
inline Lanes load_lanes(const float* p) {
  Lanes v;
  for (int i = 0; i < kLanes; ++i) v.l[i] = p[i];
  return v;
}
inline void store_lanes(float* p, const Lanes& v) {
  for (int i = 0; i < kLanes; ++i) p[i] = v.l[i];
}
inline Lanes splat(float x) {
  Lanes v;
  for (int i = 0; i < kLanes; ++i) v.l[i] = x;
  return v;
}
inline Lanes operator*(const Lanes& a, const Lanes& b) {
  Lanes v;
  for (int i = 0; i < kLanes; ++i) v.l[i] = a.l[i] * b.l[i];
  return v;
}
inline Lanes operator+(const Lanes& a, const Lanes& b) {
  Lanes v;
  for (int i = 0; i < kLanes; ++i) v.l[i] = a.l[i] + b.l[i];
  return v;
}
inline Lanes& operator+=(Lanes& a, const Lanes& b) { return a = a + b; }
#endif

KV_ALWAYS_INLINE float reduce_lanes(const Lanes& l) {
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

// The fixed-order dot product of a and b over n elements.
KV_ALWAYS_INLINE float dot_fixed(const float* a, const float* b, int n) {
  Lanes acc = splat(0.0f);
  const int n8 = n - n % kLanes;
  for (int i = 0; i < n8; i += kLanes) acc += load_lanes(a + i) * load_lanes(b + i);
  float s = reduce_lanes(acc);
  for (int i = n8; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace kvgate::kernels::cpu
