//===- Init.h - Deterministic parameter initializers ----------------------===//
//
// Fills parameter tensors the way torch.nn.init does (same fan conventions and
// formulas), but with values that are bit-for-bit reproducible on every
// platform, compiler and thread count.
//
// The random stream is Philox4x32-10 (Salmon et al., SC'11) used as a pure
// function of (seed, stream, element index): element i of a tensor reads the
// block philox(counter = {lo32(i), hi32(i), lo32(stream), hi32(stream)},
//              key = {lo32(seed), hi32(seed)}) = {x0, x1, x2, x3},
// and derives two uniforms u1 = ((x0:x1) >> 11) * 2^-53 in [0, 1) and
// u2 = ((x2:x3) >> 11) * 2^-53. Uniform kinds return low + (high - low) * u1;
// normal kinds use Box-Muller, mean + std * sqrt(-2 log(1 - u1)) * cos(2 pi
// u2), with log and cos evaluated by the runtime's own series (not libm), so
// the result does not depend on the C library. Values are computed in double
// and rounded once to the element type, so an F32 tensor holds exactly the F64
// values rounded to float. After rounding, uniform values lie in the closed
// interval [low, high].
//
// Different parameters get independent values by using different streams,
// e.g. `fluid_hash_name(parameterName)`.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_INIT_H
#define FLUID_RUNTIME_INIT_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The distribution an initializer draws from. The numeric values are part of
/// the ABI.
typedef enum fluid_init_kind {
  FLUID_INIT_ZEROS = 0,
  FLUID_INIT_ONES = 1,
  FLUID_INIT_CONSTANT = 2,        /* every element = value */
  FLUID_INIT_NORMAL = 3,          /* N(mean, std^2) */
  FLUID_INIT_UNIFORM = 4,         /* U[low, high] */
  FLUID_INIT_KAIMING_NORMAL = 5,  /* N(0, (gain / sqrt(fan))^2) */
  FLUID_INIT_KAIMING_UNIFORM = 6, /* U[-b, b], b = gain * sqrt(3 / fan) */
  FLUID_INIT_XAVIER_UNIFORM = 7,  /* U[-b, b],
                                     b = gain * sqrt(6 / (fan_in + fan_out)) */
} fluid_init_kind;

/// Which fan the Kaiming initializers scale by.
typedef enum fluid_fan_mode {
  FLUID_FAN_IN = 0,
  FLUID_FAN_OUT = 1,
} fluid_fan_mode;

/// A plain-data description of one initializer. Fields a kind does not use
/// are ignored.
typedef struct fluid_init_spec {
  int32_t kind;     /* a fluid_init_kind */
  int32_t fan_mode; /* a fluid_fan_mode: KAIMING_* */
  double value;     /* CONSTANT */
  double mean;      /* NORMAL */
  double std;       /* NORMAL, >= 0 */
  double low;       /* UNIFORM, low <= high */
  double high;      /* UNIFORM */
  double gain; /* KAIMING_*, XAVIER_UNIFORM, >= 0 (e.g. sqrt(2) for ReLU) */
} fluid_init_spec;

/// Fills `t` (F32 or F64, host memory) according to `spec`. The value of each
/// element depends only on (spec, seed, stream, element index). Fan-based
/// kinds need rank >= 2. A tensor with no elements is left alone.
fluid_status fluid_init_tensor(fluid_tensor *t, const fluid_init_spec *spec,
                               uint64_t seed, uint64_t stream);

/// PyTorch's fans of a weight of the given shape (rank >= 2):
/// fan_in = shape[1] * prod(shape[2:]), fan_out = shape[0] * prod(shape[2:]).
fluid_status fluid_init_fans(int32_t rank, const int64_t *shape,
                             int64_t *fan_in, int64_t *fan_out);

/// FNV-1a 64-bit hash of a NUL-terminated name, for use as a stream id.
uint64_t fluid_hash_name(const char *name);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_INIT_H
