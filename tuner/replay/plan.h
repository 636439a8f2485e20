// Planning a replay without a GPU: where a captured launch's pointer
// parameters go once its allocations live at new addresses, how much memory
// the replay needs, and how much each capture weighs in a total time. Pure
// functions of a formats::Capture (capture.h is the format); the CUDA side
// (replayer.h) only carries them out.
#pragma once

#include "tuner/formats/capture.h"
#include "utils/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ciq::replay {

/// The capture's parameter buffer for allocations now based at
/// `new_bases` (one per allocation, in the capture's order): each pointer
/// parameter becomes its allocation's new base plus the captured offset
/// (8 bytes, little-endian as the GPU reads them); every other byte is
/// unchanged. Fails ("invalid") when `new_bases` does not have one base per
/// allocation.
Result<std::vector<std::uint8_t>> relocated_params(const formats::Capture& capture,
                                                   const std::vector<std::uint64_t>& new_bases);

/// The parameters that point into allocation `allocation`, in order.
std::vector<std::uint32_t> params_into(const formats::Capture& capture, std::uint32_t allocation);

/// The replay's plan for people (`ciq-replay plan`): kernel, launch shape,
/// each parameter (offset, size, and the allocation and offset it points
/// into, or its bytes), each allocation (size, file), and the device memory
/// a replay takes (every allocation twice: pristine and working copy).
std::string describe_plan(const formats::Capture& capture);

/// One capture's share of a total time. A capture stands for every launch
/// of its kernel with its launch configuration (config_launches of them in
/// the program); a capture that counted none weighs 1, like one launch.
std::uint64_t capture_weight(const formats::Capture& capture);

/// The total time of several captures' medians: the launch-weighted mean
/// per launch, sum(median_i * weight_i) / sum(weight_i). One capture's
/// total is its median; over a program's configurations it is the average
/// launch as the program makes them, so that a ratio of two totals is the
/// ratio of the program's time in these kernels. Fails ("invalid") unless
/// there is one median per capture and at least one capture.
Result<double> weighted_total_ms(const std::vector<formats::Capture>& captures, const std::vector<double>& medians_ms);

/// The median of `samples` (the mean of the middle two for an even count);
/// 0 for none. Replay reports medians: robust to the occasional launch that
/// was preempted or ran at a changed clock, which a mean would absorb.
double median(std::vector<double> samples);

} // namespace ciq::replay
