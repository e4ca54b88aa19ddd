// Fused full-batch gradient descent of k logistic heads, one XLA FFI call for a batch of
// independent datasets (Fu et al. 2023, eq. (4); ntsim.core.logistic_gd_fused).
//
// For every dataset b of the flattened batch, num_steps[b] steps of
//
//     m_{h,i} = w_h · z_i,     w_h <- w_h + eta[b] * sum_i c_{h,i} * sigma(-m_{h,i}) * z_i
//
// with z_i = y_i [x_i; -1] the columns of zt (d1 x n) and c the per-head sample weights
// (k x n). One step makes one pass over the points in blocks of kLanes: the margins of all
// heads of a block, sigma(-m), and the gradient accumulated in registers (lane-wise partial
// sums, added up once per step). Datasets are spread over std::threads.
//
// Operands: zt f32[..., d1, n], c f32[..., k, n], w0 f32[..., k, d1], eta f32[...],
// num_steps s32[...] (one per dataset; the Python wrapper broadcasts a scalar). Result:
// w f32[..., k, d1].

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int kLanes = 16;  // points per block: one 512-bit register of floats
constexpr int kUnroll = 2;  // blocks per iteration (the point count is padded to a multiple)
typedef float vf __attribute__((vector_size(4 * kLanes)));
typedef int32_t vi __attribute__((vector_size(4 * kLanes)));

// sigma(-m) = 1 / (1 + e^m), with m clamped to [-87, 87] so e^m stays finite (the clamp
// changes sigma by < 2e-38 in absolute value; NaN propagates). e^m = 2^j e^r with
// j = round(m / ln 2), r = m - j ln 2 in [-ln2/2, ln2/2] (ln 2 split in two for accuracy),
// e^r by its degree-6 Taylor polynomial (relative error < 2e-7), 2^j built in the exponent bits.
inline vf splat(float x) { return vf{} + x; }

inline vf sigmoid_neg(vf m) {
  const vf hi = splat(87.0f), lo = splat(-87.0f);
  m = m > hi ? hi : m;
  m = m < lo ? lo : m;
  const vf round = splat(12582912.0f);  // 1.5 * 2^23: adding and subtracting it rounds
  vf j = (m * 1.44269504f + round) - round;
  vf r = m - j * 0.693145752f - j * 1.42860677e-6f;
  vf p = splat(1.0f / 720.0f);
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  vi bits = (__builtin_convertvector(j, vi) + 127) << 23;
  vf e = p * (vf)bits;  // a vector cast reinterprets the bits: 2^j
  return 1.0f / (1.0f + e);
}

inline float sum_lanes(vf v) {
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

// One dataset, K heads of DP (>= d1, padded) features: the accumulators K * DP vectors stay
// in registers when K * DP is small. z: blocks x DP x kLanes (block-major, zero-padded),
// c: blocks x K x kLanes (zero on padded points, which therefore contribute nothing),
// w: K x DP (zero beyond d1; padded features have z = 0, so they stay zero).
template <int K, int DP>
void run_heads(const vf* z, const vf* c, float* w, int64_t blocks, float eta, int32_t steps) {
  for (int32_t t = 0; t < steps; ++t) {
    vf acc[K][DP] = {};
    for (int64_t b = 0; b < blocks; b += kUnroll) {  // kUnroll independent blocks for ILP
      vf s[kUnroll][K];
      for (int u = 0; u < kUnroll; ++u) {
        const vf* zb = z + (b + u) * DP;
        for (int h = 0; h < K; ++h) {  // margins m_h = sum_f w_{h,f} z_f, two partial sums
          vf m0 = {}, m1 = {};
          for (int f = 0; f < DP; ++f) (f % 2 ? m1 : m0) += w[h * DP + f] * zb[f];
          s[u][h] = c[(b + u) * K + h] * sigmoid_neg(m0 + m1);  // c_{h,i} sigma(-m_{h,i})
        }
      }
      for (int u = 0; u < kUnroll; ++u)
        for (int h = 0; h < K; ++h)
          for (int f = 0; f < DP; ++f) acc[h][f] += s[u][h] * z[(b + u) * DP + f];
    }
    for (int h = 0; h < K; ++h)
      for (int f = 0; f < DP; ++f) w[h * DP + f] += eta * sum_lanes(acc[h][f]);
  }
}

template <int DP>
void run_group(int group, const vf* z, const vf* c, float* w, int64_t blocks, float eta,
               int32_t steps) {
  switch (group) {
    case 1: return run_heads<1, DP>(z, c, w, blocks, eta, steps);
    case 2: return run_heads<2, DP>(z, c, w, blocks, eta, steps);
    case 3: return run_heads<3, DP>(z, c, w, blocks, eta, steps);
    default: return run_heads<4, DP>(z, c, w, blocks, eta, steps);
  }
}

// Feature counts d1 <= 16 are compiled exactly (no padded FMAs); larger ones are padded.
using GroupFn = void (*)(int, const vf*, const vf*, float*, int64_t, float, int32_t);
template <int... D>
constexpr std::array<GroupFn, sizeof...(D)> exact_widths(std::integer_sequence<int, D...>) {
  return {&run_group<D + 1>...};
}
constexpr auto kExact = exact_widths(std::make_integer_sequence<int, 16>{});
constexpr int kMaxFeatures = 64;

int padded_features(int64_t d1) {
  if (d1 <= static_cast<int64_t>(kExact.size())) return static_cast<int>(d1);
  return d1 <= 24 ? 24 : d1 <= 32 ? 32 : d1 <= 48 ? 48 : 64;
}

// One dataset: copy it into the padded block-major layout, then run the heads in groups of
// at most 4 (heads are independent: each has its own w and c, only z is shared).
void run_dataset(const float* zt, const float* c, const float* w0, float* w_out, int64_t d1,
                 int64_t n, int64_t k, float eta, int32_t steps) {
  const int dp = padded_features(d1);
  const int64_t blocks = (n + kLanes * kUnroll - 1) / (kLanes * kUnroll) * kUnroll;
  std::vector<vf> z(blocks * dp, vf{});
  for (int64_t f = 0; f < d1; ++f)
    for (int64_t i = 0; i < n; ++i) z[(i / kLanes) * dp + f][i % kLanes] = zt[f * n + i];
  for (int64_t h0 = 0; h0 < k; h0 += 4) {
    const int group = static_cast<int>(std::min<int64_t>(4, k - h0));
    std::vector<vf> cg(blocks * group, vf{});
    std::vector<float> w(group * dp, 0.0f);
    for (int h = 0; h < group; ++h) {
      for (int64_t i = 0; i < n; ++i)
        cg[(i / kLanes) * group + h][i % kLanes] = c[(h0 + h) * n + i];
      for (int64_t f = 0; f < d1; ++f) w[h * dp + f] = w0[(h0 + h) * d1 + f];
    }
    GroupFn run = dp <= 16 ? kExact[dp - 1] : dp == 24 ? &run_group<24>
                : dp == 32 ? &run_group<32> : dp == 48 ? &run_group<48> : &run_group<64>;
    run(group, z.data(), cg.data(), w.data(), blocks, eta, steps);
    for (int h = 0; h < group; ++h)
      for (int64_t f = 0; f < d1; ++f) w_out[(h0 + h) * d1 + f] = w[h * dp + f];
  }
}

int64_t num_threads(int64_t batch) {
  int64_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char* env = std::getenv("NTSIM_FUSED_THREADS")) {
    const int64_t requested = std::atoll(env);
    if (requested > 0) threads = requested;
  }
  return std::max<int64_t>(1, std::min(threads, batch));
}

ffi::Error LogisticGdImpl(ffi::Buffer<ffi::F32> zt, ffi::Buffer<ffi::F32> c,
                          ffi::Buffer<ffi::F32> w0, ffi::Buffer<ffi::F32> eta,
                          ffi::Buffer<ffi::S32> steps, ffi::ResultBuffer<ffi::F32> w) {
  const auto zd = zt.dimensions(), cd = c.dimensions(), wd = w0.dimensions();
  if (zd.size() < 2 || cd.size() != zd.size() || wd.size() != zd.size())
    return ffi::Error::InvalidArgument("logistic_gd: zt, c, w0 must have the same rank >= 2");
  const int64_t rank = zd.size(), d1 = zd[rank - 2], n = zd[rank - 1], k = cd[rank - 2];
  int64_t batch = 1;
  for (int64_t a = 0; a < rank - 2; ++a) {
    if (cd[a] != zd[a] || wd[a] != zd[a])
      return ffi::Error::InvalidArgument("logistic_gd: batch dimensions differ");
    batch *= zd[a];
  }
  if (cd[rank - 1] != n || wd[rank - 2] != k || wd[rank - 1] != d1)
    return ffi::Error::InvalidArgument("logistic_gd: need c (..., k, n) and w0 (..., k, d1)");
  if (static_cast<int64_t>(eta.element_count()) != batch ||
      static_cast<int64_t>(steps.element_count()) != batch)
    return ffi::Error::InvalidArgument("logistic_gd: eta, num_steps need one value per dataset");
  if (d1 < 1 || d1 > kMaxFeatures)
    return ffi::Error::InvalidArgument("logistic_gd: need 1 <= d1 <= " +
                                       std::to_string(kMaxFeatures));
  const float *zp = zt.typed_data(), *cp = c.typed_data(), *wp = w0.typed_data();
  const float* ep = eta.typed_data();
  const int32_t* sp = steps.typed_data();
  float* out = w->typed_data();
  auto one = [&](int64_t b) {
    run_dataset(zp + b * d1 * n, cp + b * k * n, wp + b * k * d1, out + b * k * d1, d1, n, k,
                ep[b], std::max<int32_t>(0, sp[b]));
  };
  const int64_t threads = num_threads(batch);
  if (threads == 1) {
    for (int64_t b = 0; b < batch; ++b) one(b);
    return ffi::Error::Success();
  }
  std::atomic<int64_t> next{0};  // datasets are handed out one at a time
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int64_t b = next++; b < batch; b = next++) one(b);
    });
  for (auto& thread : pool) thread.join();
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(NtsimLogisticGd, LogisticGdImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // zt
                                  .Arg<ffi::Buffer<ffi::F32>>()  // c
                                  .Arg<ffi::Buffer<ffi::F32>>()  // w0
                                  .Arg<ffi::Buffer<ffi::F32>>()  // eta
                                  .Arg<ffi::Buffer<ffi::S32>>()  // num_steps
                                  .Ret<ffi::Buffer<ffi::F32>>()  // w
);
