//===- Resize.cpp - PIL's bilinear resampling of 8-bit RGB images ---------===//
//
// The weights follow PIL's resampling (Resample.c) step by step, in double
// precision and in the same order of operations, because an output pixel
// lying near a rounding boundary must round the same way: for output pixel
// o of a dimension shrinking (or growing) from `in` to `out` pixels,
//
//   scale   = in / out, filterScale = max(scale, 1), support = filterScale
//   center  = (o + 0.5) * scale
//   taps    = source pixels [trunc(center - support + 0.5),
//                            trunc(center + support + 0.5)), clipped to
//             [0, in)
//   weight  = triangle((i - center + 0.5) * (1 / filterScale)) for tap i,
//             triangle(x) = max(0, 1 - |x|), then divided by their sum
//   fixed   = trunc(0.5 + weight * 2^22)
//   pixel   = clamp((2^21 + sum of value * fixed) >> 22, 0, 255)
//
//===----------------------------------------------------------------------===//

#include "Resize.h"

#include <algorithm>
#include <cmath>

namespace fluid::rt::data {

namespace {

// PIL's PRECISION_BITS (32 - 8 - 2): an 8-bit value times a weight below
// 2^22, summed, stays within a signed 32-bit integer (the weights of an
// output pixel are non-negative and sum to 2^22 plus at most one half per
// tap), so the sums are int32_t, as PIL's are, and vectorize.
constexpr int kPrecisionBits = 22;
constexpr int32_t kOne = int32_t(1) << kPrecisionBits;
constexpr int32_t kHalf = int32_t(1) << (kPrecisionBits - 1);

/// The source pixels and fixed-point weights of the output pixels
/// [begin, end) of one dimension: output pixel begin + k reads source
/// pixels first[k] .. first[k] + count[k] - 1 with weights
/// weights[k * width + 0 ..].
struct Taps {
  std::vector<int64_t> first, count;
  std::vector<int32_t> weights;
  int64_t width = 0;

  /// The lowest and one past the highest source pixel any tap reads.
  int64_t lowest() const {
    return *std::min_element(first.begin(), first.end());
  }
  int64_t highest() const {
    int64_t end = 0;
    for (size_t k = 0; k < first.size(); ++k)
      end = std::max(end, first[k] + count[k]);
    return end;
  }
};

/// Output pixel o is source pixel o, weight one: a dimension that keeps its
/// size (PIL copies it).
Taps identityTaps(int64_t begin, int64_t end) {
  Taps taps;
  taps.width = 1;
  for (int64_t o = begin; o < end; ++o) {
    taps.first.push_back(o);
    taps.count.push_back(1);
    taps.weights.push_back(kOne);
  }
  return taps;
}

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

Taps bilinearTaps(int64_t in, int64_t out, int64_t begin, int64_t end) {
  if (in == out)
    return identityTaps(begin, end);
  double scale = double(in) / double(out);
  double filterScale = std::max(scale, 1.0);
  double support = filterScale; // the triangle's own support is 1
  double inverse = 1.0 / filterScale;
  Taps taps;
  taps.width = int64_t(std::ceil(support)) * 2 + 1;
  taps.weights.assign(size_t((end - begin) * taps.width), 0);
  std::vector<double> weights(size_t(taps.width));
  for (int64_t o = begin; o < end; ++o) {
    double center = (double(o) + 0.5) * scale;
    int64_t first = std::max<int64_t>(0, int64_t(center - support + 0.5));
    int64_t last = std::min<int64_t>(in, int64_t(center + support + 0.5));
    int64_t count = last - first;
    double sum = 0.0;
    for (int64_t i = 0; i < count; ++i) {
      weights[size_t(i)] =
          triangle((double(i + first) - center + 0.5) * inverse);
      sum += weights[size_t(i)];
    }
    int32_t *fixed = &taps.weights[size_t((o - begin) * taps.width)];
    for (int64_t i = 0; i < count; ++i) {
      // The sum is positive: the tap nearest the center has a weight. And
      // triangle weights are never negative, so rounding adds one half.
      fixed[i] = int32_t(0.5 + weights[size_t(i)] / sum * double(kOne));
    }
    taps.first.push_back(first);
    taps.count.push_back(count);
  }
  return taps;
}

uint8_t clip8(int32_t sum) {
  return uint8_t(std::clamp<int32_t>(sum >> kPrecisionBits, 0, 255));
}

} // namespace

void resizeBilinear(const RgbImage &source, const PixelBox &box,
                    int64_t outHeight, int64_t outWidth, const PixelBox &window,
                    uint8_t *destination) {
  Taps columns = bilinearTaps(box.width, outWidth, window.left,
                              window.left + window.width);
  Taps rows = bilinearTaps(box.height, outHeight, window.top,
                           window.top + window.height);

  // Rows first: the box's rows that the column filter reads, each filtered
  // to the window's columns and rounded to 8 bits.
  int64_t rowBegin = rows.lowest(), rowEnd = rows.highest();
  int64_t rowBytes = window.width * 3;
  std::vector<uint8_t> filtered(size_t((rowEnd - rowBegin) * rowBytes));
  for (int64_t y = rowBegin; y < rowEnd; ++y) {
    const uint8_t *in =
        &source.pixels[size_t(((box.top + y) * source.width + box.left) * 3)];
    uint8_t *out = &filtered[size_t((y - rowBegin) * rowBytes)];
    for (int64_t x = 0; x < window.width; ++x) {
      const int32_t *weight = &columns.weights[size_t(x * columns.width)];
      const uint8_t *tap = in + columns.first[size_t(x)] * 3;
      int32_t r = kHalf, g = kHalf, b = kHalf;
      for (int64_t i = 0; i < columns.count[size_t(x)]; ++i, tap += 3) {
        r += tap[0] * weight[i];
        g += tap[1] * weight[i];
        b += tap[2] * weight[i];
      }
      out[x * 3 + 0] = clip8(r);
      out[x * 3 + 1] = clip8(g);
      out[x * 3 + 2] = clip8(b);
    }
  }

  // Then columns, over the filtered rows: a whole output row at a time,
  // one tap row after the other (the same sums in the same order as per
  // pixel, in loops over contiguous bytes that the compiler vectorizes).
  std::vector<int32_t> sums(static_cast<size_t>(rowBytes));
  for (int64_t y = 0; y < window.height; ++y) {
    const int32_t *weight = &rows.weights[size_t(y * rows.width)];
    const uint8_t *in =
        &filtered[size_t((rows.first[size_t(y)] - rowBegin) * rowBytes)];
    uint8_t *out = destination + y * rowBytes;
    std::fill(sums.begin(), sums.end(), kHalf);
    int32_t *sum = sums.data();
    for (int64_t i = 0; i < rows.count[size_t(y)]; ++i, in += rowBytes) {
      const int32_t w = weight[i];
      for (int64_t x = 0; x < rowBytes; ++x)
        sum[x] += int32_t(in[x]) * w;
    }
    for (int64_t x = 0; x < rowBytes; ++x)
      out[x] = clip8(sum[x]);
  }
}

} // namespace fluid::rt::data
