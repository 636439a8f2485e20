// What a captured kernel's pointer parameters point at, as the program
// tells it: a C++ kernel's mangled name (launch.json's "kernel") carries
// its parameter types, `_Z6doublePfi` is `double(float*, int)`. The
// comparison (compare.h) reads an allocation as floating-point elements
// only when every parameter pointing into it agrees on one floating-point
// type; integer, boolean, unknown and disputed allocations are compared
// bitwise whatever the tolerance.
//
// Not known: kernels without a C++ signature. Triton's (and `extern "C"`)
// kernels have plain names; Triton keeps its signature ("*fp32", "i32")
// in its compile metadata beside the cubin in its own cache, which a
// capture does not record and the PTX does not carry (pointers are .u64
// there): their allocations are compared bitwise.
#pragma once

#include "tuner/formats/capture.h"
#include "tuner/formats/compare_mode.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ciq::replay {

using formats::ElementType;

/// One parameter of a demangled signature.
struct ParamType {
  std::string text;  // as demangled, e.g. "float const*", "int", "__nv_bfloat16*"
  /// The element type when `text` is a pointer to a floating-point type
  /// (float, double, __half, __nv_bfloat16 and their vector types float2,
  /// float4, double2, __half2, __nv_bfloat162, through const/volatile);
  /// `bytes` for anything else (integers, bool, structures, void*, a
  /// parameter that is not a pointer).
  ElementType element = ElementType::bytes;
};

/// The parameters of the mangled C++ function name `kernel`, in order;
/// std::nullopt when `kernel` is not a mangled name (Triton, extern "C")
/// or cannot be demangled.
std::optional<std::vector<ParamType>> kernel_param_types(const std::string& kernel);

/// How allocation `allocation` of `capture` is compared, and why.
struct AllocationType {
  ElementType element = ElementType::bytes;
  /// For `bytes`: why, for a wrong-answer line ("parameter 0 is int*",
  /// "parameters 0 and 2 disagree: float*, int*", "the kernel's name
  /// carries no C++ signature ..."); "" for a floating-point type.
  std::string why_bitwise;
};

/// One per allocation of `capture`, in its order. When the signature's
/// parameter count is not the capture's, no type is trusted (all `bytes`).
std::vector<AllocationType> allocation_types(const formats::Capture& capture);

} // namespace ciq::replay
