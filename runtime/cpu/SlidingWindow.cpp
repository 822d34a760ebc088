//===- SlidingWindow.cpp - Geometry of convolution and pooling windows ----===//

#include "SlidingWindow.h"
#include "TensorChecks.h"

using namespace fluid::rt;
using namespace fluid::rt::cpu;

WindowAxis cpu::makeWindowAxis(const std::string &axisName, int64_t extent,
                               int64_t padBefore, int64_t padAfter,
                               int64_t kernel, int64_t stride, int64_t dilation,
                               bool ceilMode) {
  if (kernel < 1)
    fail("kernel " + axisName + " must be >= 1, got " + std::to_string(kernel));
  if (stride < 1)
    fail("stride along " + axisName + " must be >= 1, got " +
         std::to_string(stride));
  if (dilation < 1)
    fail("dilation along " + axisName + " must be >= 1, got " +
         std::to_string(dilation));
  if (padBefore < 0 || padAfter < 0)
    fail("padding along " + axisName + " must be >= 0, got " +
         std::to_string(padBefore) + " and " + std::to_string(padAfter));

  int64_t padded =
      checkedAdd(checkedAdd(extent, padBefore, "padded " + axisName), padAfter,
                 "padded " + axisName);
  int64_t span =
      checkedAdd(checkedMul(dilation, kernel - 1, "window " + axisName), 1,
                 "window " + axisName);
  if (span > padded)
    fail("window " + axisName + " " + std::to_string(span) +
         " exceeds the padded input " + axisName + " " +
         std::to_string(padded));
  int64_t room = padded - span;
  int64_t steps = ceilMode ? detail::ceilDiv(room, stride) : room / stride;
  // Like PyTorch, drop a last window that starts in the trailing padding:
  // steps * stride >= extent + padBefore, tested without a product that
  // could overflow.
  if (ceilMode && steps > 0 && steps > (extent + padBefore - 1) / stride)
    --steps;
  return WindowAxis{extent, padBefore, padAfter, kernel,
                    stride, dilation,  steps + 1};
}

void cpu::requireWindowsTouchInput(const WindowAxis &axis,
                                   const std::string &axisName) {
  for (int64_t o = 0; o < axis.outSize; ++o) {
    int64_t begin, end;
    axis.tapsReadingInput(o, begin, end);
    if (begin == end)
      fail("the window of output " + axisName + " index " + std::to_string(o) +
           " covers only padding (padding too large for the kernel)");
  }
}

Shape Conv2dGeometry::inputShape() const {
  if (channelsLast)
    return {batch, rows.extent, cols.extent, inChannels};
  return {batch, inChannels, rows.extent, cols.extent};
}

Shape Conv2dGeometry::filterShape() const {
  if (channelsLast)
    return {outChannels, rows.kernel, cols.kernel, inChannelsPerGroup()};
  return {outChannels, inChannelsPerGroup(), rows.kernel, cols.kernel};
}

Shape Conv2dGeometry::outputShape() const {
  if (channelsLast)
    return {batch, rows.outSize, cols.outSize, outChannels};
  return {batch, outChannels, rows.outSize, cols.outSize};
}

int64_t cpu::conv2dChannelDim(const fluid_conv2d_params &params) {
  if (params.channels_last != 0 && params.channels_last != 1)
    fail("channels_last must be 0 (NCHW) or 1 (NHWC), got " +
         std::to_string(params.channels_last));
  return params.channels_last ? 3 : 1;
}

Conv2dGeometry cpu::makeConv2dGeometry(const CheckedTensor &input,
                                       const CheckedTensor &filter,
                                       const fluid_conv2d_params &params) {
  // Channels first: [N,C,H,W] and [O,C/groups,KH,KW]; channels last:
  // [N,H,W,C] and [O,KH,KW,C/groups].
  const int64_t channelDim = conv2dChannelDim(params);
  const int64_t rowDim = params.channels_last ? 1 : 2;
  const int64_t colDim = rowDim + 1;
  const int64_t groups = params.groups;
  Conv2dGeometry g;
  g.channelsLast = params.channels_last == 1;
  g.batch = input.dim(0);
  g.inChannels = input.dim(channelDim);
  g.outChannels = filter.dim(0);
  g.groups = groups;
  if (groups < 1)
    fail("groups must be >= 1, got " + std::to_string(groups));
  if (g.inChannels % groups != 0)
    fail("input channels " + std::to_string(g.inChannels) + " (" + input.name +
         " dimension " + std::to_string(channelDim) +
         ") are not divisible by groups " + std::to_string(groups));
  if (g.outChannels % groups != 0)
    fail("output channels " + std::to_string(g.outChannels) + " (" +
         filter.name + " dimension 0) are not divisible by groups " +
         std::to_string(groups));
  if (filter.dim(channelDim) != g.inChannelsPerGroup())
    fail(filter.name + " shape " + formatShape(filter.shape) +
         " needs dimension " + std::to_string(channelDim) +
         " = input channels / groups = " +
         std::to_string(g.inChannelsPerGroup()));
  g.rows = makeWindowAxis("height", input.dim(rowDim), params.padding[0],
                          params.padding[2], filter.dim(rowDim),
                          params.strides[0], params.dilation[0],
                          /*ceilMode=*/false);
  g.cols = makeWindowAxis("width", input.dim(colDim), params.padding[1],
                          params.padding[3], filter.dim(colDim),
                          params.strides[1], params.dilation[1],
                          /*ceilMode=*/false);
  return g;
}

void Pool2dGeometry::requireWindowsTouchInput() const {
  cpu::requireWindowsTouchInput(rows, "height");
  cpu::requireWindowsTouchInput(cols, "width");
}

Pool2dGeometry cpu::makePool2dGeometry(
    const CheckedTensor &inputShaped, const CheckedTensor &outputShaped,
    const int64_t kernel[2], const int64_t strides[2], const int64_t padding[4],
    const int64_t dilation[2], bool ceilMode, bool channelsLast) {
  // f16 and bf16 reach here only from the cuda backend's 16-bit max
  // pooling (the cpu kernels widen them to f32 first); any other dtype
  // gets the cpu kernels' message.
  if (!isFloat16Dtype(inputShaped.dtype()))
    requireFloat(inputShaped);
  requireDtype(outputShaped, inputShaped);
  requireRank(inputShaped, 4);
  // Channels first: [N,C,H,W]; channels last: [N,H,W,C].
  const Shape &in = inputShaped.shape;
  const int64_t channelDim = channelsLast ? 3 : 1;
  const int64_t rowDim = channelsLast ? 1 : 2;
  Pool2dGeometry g;
  g.channelsLast = channelsLast;
  g.batch = in[0];
  g.channels = in[channelDim];
  g.planes = g.batch * g.channels;
  g.rows = makeWindowAxis("height", in[rowDim], padding[0], padding[2],
                          kernel[0], strides[0], dilation[0], ceilMode);
  g.cols = makeWindowAxis("width", in[rowDim + 1], padding[1], padding[3],
                          kernel[1], strides[1], dilation[1], ceilMode);
  if (channelsLast)
    requireShape(outputShaped,
                 {g.batch, g.rows.outSize, g.cols.outSize, g.channels});
  else
    requireShape(outputShaped,
                 {g.batch, g.channels, g.rows.outSize, g.cols.outSize});
  return g;
}

Pool2dGeometry
cpu::makeMaxPool2dGeometry(const CheckedTensor &inputShaped,
                           const CheckedTensor &outputShaped,
                           const fluid_max_pool2d_params &params) {
  if (params.channels_last != 0 && params.channels_last != 1)
    fail("channels_last must be 0 (NCHW) or 1 (NHWC), got " +
         std::to_string(params.channels_last));
  return makePool2dGeometry(inputShaped, outputShaped, params.kernel,
                            params.strides, params.padding, params.dilation,
                            params.ceil_mode != 0, params.channels_last == 1);
}

void cpu::requirePoolIndices(const CheckedTensor &indices,
                             const CheckedTensor &outputShaped,
                             const int64_t kernel[2]) {
  if (indices.dtype() != FLUID_U8)
    fail(indices.name + " has dtype " + dtypeName(indices.dtype()) +
         "; the indices of max pooling are u8");
  requireShape(indices, outputShaped.shape);
  // makePool2dGeometry has checked that both sizes are >= 1.
  if (kernel[0] > kMaxPoolIndexCells / kernel[1])
    fail("the kernel " + std::to_string(kernel[0]) + "x" +
         std::to_string(kernel[1]) + " has more than " +
         std::to_string(kMaxPoolIndexCells) + " cells, too many for u8 " +
         "indices");
}

Pool2dGeometry cpu::makeAvgPool2dGeometry(const CheckedTensor &inputShaped,
                                          const CheckedTensor &outputShaped,
                                          const int64_t kernel[2],
                                          const int64_t strides[2],
                                          const int64_t padding[4],
                                          bool ceilMode, bool countIncludePad) {
  const int64_t noDilation[2] = {1, 1};
  Pool2dGeometry g =
      makePool2dGeometry(inputShaped, outputShaped, kernel, strides, padding,
                         noDilation, ceilMode, /*channelsLast=*/false);
  if (!countIncludePad)
    g.requireWindowsTouchInput();
  return g;
}
