// How far apart a kernel's outputs may legitimately be after a compiler
// change that ciq's spaces allow (docs/whole-program.md, "What the
// comparison modes promise"): the measurement behind `--compare close`'s
// default tolerances. No GPU: llm.c-like kernels (GPT-2 124M shapes, C =
// 768, inputs rounded to the output type, fp32 accumulation) computed on
// the CPU twice, as a GPU would under the default code and under a
// numerics-class knob:
//
//   fmad      a * b + c as one fused multiply-add (ptxas/nvcc default)
//             against a rounded product then a rounded add (--fmad=false)
//   approx    IEEE division and sqrt (the default) against the
//             approximate ones of -prec-div=false / -prec-sqrt=false,
//             modelled as the exact result perturbed by up to 2 ulp
//   order     a sequential sum against a warp-shaped one (32 strided lanes,
//             then a butterfly tree): not a change ptxas makes (it never
//             reassociates floating-point adds), but the largest
//             rearrangement a legal source-preserving change could make;
//             shown so that the default's margin can be judged
//
// For each output type (bf16, f16, f32; f64 computed in double) it prints
// the largest absolute difference, the largest relative one among
// elements of magnitude >= 1e-2, and, for the defaults compiled in below,
// how much of the allowance atol + rtol * |expected| the worst element
// used (must stay below 1) and how many elements of a wrong answer the
// defaults catch: a K loop that skips its last 32 terms, outputs of
// ~1e-4 replaced by zeros, a one-ulp-per-element drift of four ulps.
//
//   g++ -O2 -std=c++17 -ffp-contract=off bench/tolerance/compare_tolerance.cpp -o /tmp/compare_tolerance
//   /tmp/compare_tolerance
//
// -ffp-contract=off matters: the "no fma" variant must round the product.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

enum class Type { bf16, f16, f32, f64 };
const char* type_name(Type t) { return t == Type::bf16 ? "bf16" : t == Type::f16 ? "f16" : t == Type::f32 ? "f32" : "f64"; }

// The defaults ciq-replay uses (tuner/formats/compare_mode.cpp): keep in step.
struct Tolerance {
  double rtol, atol;
};
Tolerance default_tolerance(Type t) {
  switch (t) {
  case Type::bf16: return {1.6e-2, 1e-5};
  case Type::f16: return {2e-3, 1e-5};
  case Type::f32: return {1e-5, 1e-5};
  case Type::f64: return {1e-13, 1e-13};
  }
  return {0, 0};
}

float round_bf16(float x) {  // round to nearest even, as __float2bfloat16_rn
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0x7fff + ((u >> 16) & 1);
  u &= 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

double round_to(Type t, double x) {
  switch (t) {
  case Type::bf16: return round_bf16(float(x));
  case Type::f16: return double(_Float16(float(x)));
  case Type::f32: return float(x);
  case Type::f64: return x;
  }
  return x;
}

/// The arithmetic of one variant: accumulation type A (float, or double
/// for f64 outputs), with or without fma, with exact or approximate
/// division and square root.
struct Variant {
  bool fma = true, approx = false, warp_order = false;
};

template <typename A> A mul_add(const Variant& v, A a, A b, A c) { return v.fma ? std::fma(a, b, c) : a * b + c; }

/// The approximate unit's result: the exact one moved by a deterministic
/// pseudo-random amount of up to 2 ulp (rsqrt.approx/rcp.approx/div.full
/// are documented within 2 ulp).
template <typename A> A approximate(A exact, std::uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  int ulps = int((state >> 33) % 5) - 2;
  A x = exact;
  for (; ulps > 0; --ulps) x = std::nextafter(x, A(INFINITY));
  for (; ulps < 0; ++ulps) x = std::nextafter(x, A(-INFINITY));
  return x;
}

template <typename A> A sum_products(const Variant& v, const std::vector<A>& a, const std::vector<A>& b, std::size_t skip_tail = 0) {
  std::size_t n = a.size() - skip_tail;
  if (!v.warp_order) {
    A s = 0;
    for (std::size_t k = 0; k < n; ++k) s = mul_add(v, a[k], b[k], s);
    return s;
  }
  A lane[32] = {};
  for (std::size_t k = 0; k < n; ++k) lane[k % 32] = mul_add(v, a[k], b[k], lane[k % 32]);
  for (int offset = 16; offset > 0; offset /= 2)
    for (int l = 0; l < offset; ++l) lane[l] = lane[l] + lane[l + offset];
  return lane[0];
}

struct Outputs {
  std::vector<double> values;  // already rounded to the output type
};

using Kernel = std::function<Outputs(Type, const Variant&, std::size_t skip_tail)>;

/// layernorm_forward: one row of C, mean and rstd in fp32, out in the type.
template <typename A> Outputs layernorm(Type t, const Variant& v, std::size_t rows, std::size_t C) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> act(0.0, 1.0), weight(1.0, 0.1), bias(0.0, 0.1);
  std::vector<A> w(C), b(C);
  for (auto& x : w) x = A(round_to(t, weight(rng)));
  for (auto& x : b) x = A(round_to(t, bias(rng)));
  Outputs out;
  std::uint64_t state = 7;
  std::vector<A> x(C), ones(C, A(1));
  for (std::size_t r = 0; r < rows; ++r) {
    for (auto& e : x) e = A(round_to(t, act(rng) * 2 + 0.3));
    A sum = sum_products(v, x, ones);
    A mean = v.approx ? approximate(sum / A(C), state) : sum / A(C);
    std::vector<A> d(C);
    for (std::size_t i = 0; i < C; ++i) d[i] = x[i] - mean;
    A var = sum_products(v, d, d);
    A scaled = v.approx ? approximate(var / A(C), state) : var / A(C);
    A root = std::sqrt(scaled + A(1e-5));
    A rstd = v.approx ? approximate(A(1) / root, state) : A(1) / root;
    for (std::size_t i = 0; i < C; ++i) out.values.push_back(round_to(t, mul_add(v, d[i] * rstd, w[i], b[i])));
  }
  return out;
}

/// matmul_forward: rows x OC outputs, each bias + sum over K of
/// inp * weight (weights ~ N(0, 0.02) as GPT-2's), out in the type.
template <typename A> Outputs matmul(Type t, const Variant& v, std::size_t rows, std::size_t K, std::size_t OC, std::size_t skip_tail) {
  std::mt19937_64 rng(2);
  std::normal_distribution<double> act(0.0, 1.0), weight(0.0, 0.02);
  std::vector<std::vector<A>> w(OC, std::vector<A>(K));
  std::vector<A> bias(OC);
  for (auto& row : w)
    for (auto& x : row) x = A(round_to(t, weight(rng)));
  for (auto& x : bias) x = A(round_to(t, weight(rng)));
  Outputs out;
  std::vector<A> in(K);
  for (std::size_t r = 0; r < rows; ++r) {
    for (auto& x : in) x = A(round_to(t, act(rng)));
    for (std::size_t o = 0; o < OC; ++o) out.values.push_back(round_to(t, bias[o] + sum_products(v, in, w[o], skip_tail)));
  }
  return out;
}

/// softmax over a row of T attention scores: exp(x - max) / sum.
template <typename A> Outputs softmax(Type t, const Variant& v, std::size_t rows, std::size_t T) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> score(0.0, 3.0);
  Outputs out;
  std::uint64_t state = 11;
  std::vector<A> x(T), e(T), ones(T, A(1));
  for (std::size_t r = 0; r < rows; ++r) {
    for (auto& s : x) s = A(round_to(t, score(rng)));
    A mx = *std::max_element(x.begin(), x.end());
    for (std::size_t i = 0; i < T; ++i) e[i] = std::exp(x[i] - mx);
    A sum = sum_products(v, e, ones);
    for (std::size_t i = 0; i < T; ++i) out.values.push_back(round_to(t, v.approx ? approximate(e[i] / sum, state) : e[i] / sum));
  }
  return out;
}

/// gelu_forward (tanh form), elementwise: 0.5 x (1 + tanh(s (x + 0.044715 x^3))).
template <typename A> Outputs gelu(Type t, const Variant& v, std::size_t n) {
  std::mt19937_64 rng(4);
  std::normal_distribution<double> act(0.0, 1.5);
  Outputs out;
  const A s = A(0.7978845608028654);
  for (std::size_t i = 0; i < n; ++i) {
    A x = A(round_to(t, act(rng)));
    A cube = A(0.044715) * x * x * x;
    A inner = s * (x + cube);
    out.values.push_back(round_to(t, mul_add(v, A(0.5) * x, std::tanh(inner), A(0.5) * x)));
  }
  return out;
}

template <typename A> std::vector<std::pair<std::string, Kernel>> kernels() {
  return {
      {"layernorm 256x768", [](Type t, const Variant& v, std::size_t) { return layernorm<A>(t, v, 256, 768); }},
      {"matmul K=768", [](Type t, const Variant& v, std::size_t skip) { return matmul<A>(t, v, 8, 768, 768, skip); }},
      {"matmul K=3072", [](Type t, const Variant& v, std::size_t skip) { return matmul<A>(t, v, 4, 3072, 768, skip); }},
      {"softmax 64x1024", [](Type t, const Variant& v, std::size_t) { return softmax<A>(t, v, 64, 1024); }},
      {"gelu 196608", [](Type t, const Variant& v, std::size_t) { return gelu<A>(t, v, 196608); }},
  };
}

struct Comparison {
  double max_abs = 0, max_rel = 0, used = 0;  // used: the largest |a-b| / (atol + rtol |b|)
  std::size_t differing = 0, flagged = 0, count = 0;
};

Comparison compare(const Outputs& expected, const Outputs& got, Tolerance tol) {
  Comparison c;
  c.count = expected.values.size();
  for (std::size_t i = 0; i < c.count; ++i) {
    double b = expected.values[i], a = got.values[i], d = std::fabs(a - b);
    if (d == 0) continue;
    ++c.differing;
    c.max_abs = std::max(c.max_abs, d);
    if (std::fabs(b) >= 1e-2) c.max_rel = std::max(c.max_rel, d / std::fabs(b));
    double allowed = tol.atol + tol.rtol * std::fabs(b);
    c.used = std::max(c.used, d / allowed);
    if (d > allowed) ++c.flagged;
  }
  return c;
}

template <typename A> void measure(Type t) {
  Tolerance tol = default_tolerance(t);
  std::printf("\n%s outputs (default: rtol=%g, atol=%g)\n", type_name(t), tol.rtol, tol.atol);
  std::printf("  %-18s %-8s %10s %11s %11s %9s %8s\n", "kernel", "change", "differing", "max |a-b|", "max rel", "used", "flagged");
  for (auto& [name, kernel] : kernels<A>()) {
    Outputs base = kernel(t, Variant{}, 0);
    struct Change {
      const char* name;
      Variant variant;
    };
    for (const Change& change : {Change{"fmad", Variant{false, false, false}}, Change{"approx", Variant{true, true, false}},
                                 Change{"order", Variant{true, false, true}}}) {
      Comparison c = compare(base, kernel(t, change.variant, 0), tol);
      std::printf("  %-18s %-8s %10zu %11.3g %11.3g %9.3f %8zu\n", name.c_str(), change.name, c.differing, c.max_abs, c.max_rel,
                  c.used, c.flagged);
    }
    if (name.rfind("matmul", 0) == 0) {  // a wrong answer: the K loop stops 32 terms short
      Comparison c = compare(base, kernel(t, Variant{}, 32), tol);
      std::printf("  %-18s %-8s %10zu %11.3g %11.3g %9.3f %8zu  <- wrong: K loop 32 short\n", name.c_str(), "wrong", c.differing,
                  c.max_abs, c.max_rel, c.used, c.flagged);
    }
  }
  // Wrong answers independent of a kernel: outputs of ~1e-4 zeroed, and
  // every element moved by four ulps of the type.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> small(0.5e-4, 2e-4), unit(0.5, 2);
  Outputs tiny, zeros, values, drifted;
  for (int i = 0; i < 4096; ++i) {
    tiny.values.push_back(round_to(t, small(rng)));
    zeros.values.push_back(0);
    double x = round_to(t, unit(rng));
    values.values.push_back(x);
    double ulp = t == Type::bf16 ? std::ldexp(1.0, std::ilogb(x) - 7)
                 : t == Type::f16 ? std::ldexp(1.0, std::ilogb(x) - 10)
                 : t == Type::f32 ? std::ldexp(1.0, std::ilogb(x) - 23)
                                  : std::ldexp(1.0, std::ilogb(x) - 52);
    drifted.values.push_back(x + 4 * ulp);
  }
  Comparison z = compare(tiny, zeros, tol), u = compare(values, drifted, tol);
  std::printf("  %-18s %-8s %10zu %11.3g %11s %9.3f %8zu  <- wrong: ~1e-4 replaced by 0\n", "synthetic", "wrong", z.differing,
              z.max_abs, "-", z.used, z.flagged);
  std::printf("  %-18s %-8s %10zu %11.3g %11.3g %9.3f %8zu  <- wrong: every element 4 ulp off\n", "synthetic", "wrong", u.differing,
              u.max_abs, u.max_rel, u.used, u.flagged);
}

} // namespace

int main() {
  std::printf("Output differences under numerics-class compiler changes (CPU model; see the header)\n");
  std::printf("used = max |a-b| / (atol + rtol |expected|) over the elements (< 1: within the default)\n");
  measure<float>(Type::bf16);
  measure<float>(Type::f16);
  measure<float>(Type::f32);
  measure<double>(Type::f64);
  return 0;
}
