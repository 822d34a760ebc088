//===- softmax-regression.cpp - A hand-written program for the driver -----===//
//
// What fluid-compile emits, written by hand against Program.h, so that the
// training driver is tested without the compiler: a linear classifier on
// flattened 1x28x28 images (10 classes, batch 16) trained with plain SGD.
//
//   logits = linear(images viewed as [16,784], fc.weight, fc.bias)
//   loss   = softmax_cross_entropy(logits, labels)           (mean)
//   dlogits = softmax_cross_entropy_grad(1.0, logits, labels)
//   dW = dlogits^T x, db = sum over rows of dlogits
//   rate = f32(learning_rate); W -= rate dW; b -= rate db; global_step += 1
//
// The training function takes its arguments in the order (labels, images),
// so that the driver must find them by name. Built twice: fluid-driver-test
// (cpu kernels) and, with FLUID_DRIVER_TEST_CUDA, fluid-driver-test-cuda
// (the same launches on the cuda backend). FLUID_DRIVER_TEST_VARIANT
// changes the program before the driver sees it, for the error tests:
// baked-lr (no learning-rate parameter), no-predict, abi (a future ABI
// version), backend (an unknown backend), cuda (claims the cuda backend);
// and for the memory tests: temporaries (the logits' gradient is a
// temporary of each step, from fluid_<backend>_allocate and released after
// its last use, rather than a buffer), unwritten-rate (the learning-rate
// result's buffer is never written, so the driver's fill shows in the log),
// workspace-limit (a cuDNN workspace limit of 1 MiB); and imported (as
// fluid-import-onnx makes programs: zero placeholders for the weights, whose
// values are in softmax.safetensors).
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/CpuGradKernels.h"
#include "fluid/runtime/CpuKernels.h"
#include "fluid/runtime/CpuOptimizerKernels.h"
#include "fluid/runtime/Program.h"

#ifdef FLUID_DRIVER_TEST_CUDA
#include "fluid/runtime/CudaKernels.h"
#define KERNEL(op, ...)                                                        \
  fluid_cuda_##op(static_cast<fluid_cuda_context *>(env->backend_context),     \
                  __VA_ARGS__)
#define BACKEND FLUID_BACKEND_CUDA
#else
#define KERNEL(op, ...) fluid_cpu_##op(__VA_ARGS__)
#define BACKEND FLUID_BACKEND_CPU
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

namespace {

constexpr int64_t kBatch = 16, kFeatures = 28 * 28, kClasses = 10;

// Set from FLUID_DRIVER_TEST_VARIANT in main().
bool gTemporaries = false, gUnwrittenRate = false;

/// A temporary of one run, as a program that frees at last use takes it.
fluid_status allocateTemporary(const fluid_program_env *env, int64_t bytes,
                               void **data) {
#ifdef FLUID_DRIVER_TEST_CUDA
  return fluid_cuda_allocate(
      static_cast<fluid_cuda_context *>(env->backend_context), bytes, data);
#else
  (void)env;
  return fluid_cpu_allocate(bytes, data);
#endif
}

fluid_status releaseTemporary(const fluid_program_env *env, void *data) {
#ifdef FLUID_DRIVER_TEST_CUDA
  return fluid_cuda_release(
      static_cast<fluid_cuda_context *>(env->backend_context), data);
#else
  (void)env;
  fluid_cpu_release(data);
  return fluid_last_error()[0] ? FLUID_ERROR_INVALID_ARGUMENT : FLUID_OK;
#endif
}

enum Param { kWeight, kBias, kLearningRate, kStep, kNumParams };
enum TrainBuffer {
  kLogits,
  kLoss,
  kGradLogits,
  kGradWeight,
  kGradBias,
  kRate32,
  kRate,
  kOne,
  kOneStep,
  kNumTrainBuffers
};
enum TrainArgument { kLabels, kImages };

fluid_tensor tensor(void *data, fluid_dtype dtype,
                    std::initializer_list<int64_t> shape) {
  fluid_tensor t = {};
  t.data = data;
  t.dtype = dtype;
  for (int64_t d : shape)
    t.shape[t.rank++] = d;
  return t;
}

fluid_program_value value(const char *name, fluid_dtype dtype,
                          std::initializer_list<int64_t> shape) {
  fluid_program_value v = {};
  v.name = name;
  v.dtype = dtype;
  for (int64_t d : shape)
    v.shape[v.rank++] = d;
  return v;
}

/// One launch: the profiling hook around a checked kernel call.
#define LAUNCH(index, call)                                                    \
  do {                                                                         \
    if (env->on_launch)                                                        \
      env->on_launch(env->user, index, 0);                                     \
    fluid_status status = call;                                                \
    if (env->on_launch)                                                        \
      env->on_launch(env->user, index, 1);                                     \
    if (status != FLUID_OK)                                                    \
      return status;                                                           \
  } while (0)

/// Writes a host value into a constant buffer.
fluid_status setConstant(const fluid_program_env *env, void *buffer,
                         const void *value, int64_t bytes) {
#ifdef FLUID_DRIVER_TEST_CUDA
  return fluid_cuda_copy_to_device(
      static_cast<fluid_cuda_context *>(env->backend_context), buffer, value,
      bytes);
#else
  (void)env;
  std::memcpy(buffer, value, static_cast<size_t>(bytes));
  return FLUID_OK;
#endif
}

fluid_status trainInitialize(const fluid_program_env *env,
                             const fluid_program_memory *memory) {
  const float one = 1.0f;
  const int64_t oneStep = 1;
  fluid_status status =
      setConstant(env, memory->buffers[kOne], &one, sizeof(one));
  if (status != FLUID_OK)
    return status;
  return setConstant(env, memory->buffers[kOneStep], &oneStep, sizeof(oneStep));
}

fluid_status trainRun(const fluid_program_env *env,
                      const fluid_program_memory *memory) {
  void *const *p = memory->params;
  void *const *b = memory->buffers;
  void *const *a = memory->arguments;
  // The images viewed as [N, 784]: same memory, another descriptor.
  fluid_tensor x = tensor(a[kImages], FLUID_F32, {kBatch, kFeatures});
  fluid_tensor labels = tensor(a[kLabels], FLUID_I64, {kBatch});
  fluid_tensor w = tensor(p[kWeight], FLUID_F32, {kClasses, kFeatures});
  fluid_tensor bias = tensor(p[kBias], FLUID_F32, {kClasses});
  fluid_tensor lr = tensor(p[kLearningRate], FLUID_F64, {});
  fluid_tensor step = tensor(p[kStep], FLUID_I64, {});
  fluid_tensor logits = tensor(b[kLogits], FLUID_F32, {kBatch, kClasses});
  fluid_tensor loss = tensor(b[kLoss], FLUID_F32, {});
  void *gradLogitsData = b[kGradLogits];
  if (gTemporaries) {
    fluid_status status = allocateTemporary(
        env, kBatch * kClasses * sizeof(float), &gradLogitsData);
    if (status != FLUID_OK)
      return status;
  }
  fluid_tensor gradLogits =
      tensor(gradLogitsData, FLUID_F32, {kBatch, kClasses});
  fluid_tensor gradWeight =
      tensor(b[kGradWeight], FLUID_F32, {kClasses, kFeatures});
  fluid_tensor gradBias = tensor(b[kGradBias], FLUID_F32, {kClasses});
  fluid_tensor rate32 = tensor(b[kRate32], FLUID_F32, {});
  fluid_tensor rate = tensor(b[kRate], FLUID_F64, {});
  fluid_tensor one = tensor(b[kOne], FLUID_F32, {});
  fluid_tensor oneStep = tensor(b[kOneStep], FLUID_I64, {});
  fluid_matmul_params transposeLhs = {1, 0};
  fluid_reduce_params rows = {{0}, 1, 0};
  fluid_sgd_params sgd = {0.0};

  LAUNCH(0, KERNEL(linear, &x, &w, &bias, &logits));
  LAUNCH(1, KERNEL(softmax_cross_entropy, &logits, &labels, &loss,
                   FLUID_REDUCTION_MEAN));
  LAUNCH(2, KERNEL(softmax_cross_entropy_grad, &one, &logits, &labels,
                   &gradLogits, FLUID_REDUCTION_MEAN));
  LAUNCH(3, KERNEL(matmul, &gradLogits, &x, &gradWeight, &transposeLhs));
  LAUNCH(4, KERNEL(reduce_sum, &gradLogits, &gradBias, &rows));
  if (gTemporaries) {
    fluid_status status = releaseTemporary(env, gradLogitsData);
    if (status != FLUID_OK)
      return status;
  }
  LAUNCH(5, KERNEL(cast, &lr, &rate32));
  if (!gUnwrittenRate)
    LAUNCH(6, KERNEL(reshape, &lr, &rate));
  LAUNCH(7, KERNEL(sgd, &w, &gradWeight, &rate32, nullptr, &w, &sgd));
  LAUNCH(8, KERNEL(sgd, &bias, &gradBias, &rate32, nullptr, &bias, &sgd));
  LAUNCH(9, KERNEL(add, &step, &oneStep, &step));
  return FLUID_OK;
}

fluid_status predictRun(const fluid_program_env *env,
                        const fluid_program_memory *memory) {
  fluid_tensor x = tensor(memory->arguments[0], FLUID_F32, {kBatch, kFeatures});
  fluid_tensor w =
      tensor(memory->params[kWeight], FLUID_F32, {kClasses, kFeatures});
  fluid_tensor bias = tensor(memory->params[kBias], FLUID_F32, {kClasses});
  fluid_tensor logits =
      tensor(memory->buffers[0], FLUID_F32, {kBatch, kClasses});
  LAUNCH(0, KERNEL(linear, &x, &w, &bias, &logits));
  return FLUID_OK;
}

/// A parameter; what is not trainable is optimizer state (the step counter
/// and the base rate), as fluid-compile marks them.
fluid_program_param param(fluid_program_value v, fluid_init_spec init,
                          int64_t integerInit, int32_t trainable) {
  fluid_program_param p = {};
  p.value = v;
  p.init = init;
  p.integer_init = integerInit;
  p.trainable = trainable;
  p.optimizer_state = !trainable;
  return p;
}

fluid_init_spec initSpec(fluid_init_kind kind, double a) {
  fluid_init_spec spec = {};
  spec.kind = kind;
  spec.fan_mode = FLUID_FAN_IN;
  spec.value = a;
  spec.gain = a;
  return spec;
}

const fluid_program_param kParams[kNumParams] = {
    // torch.nn.Linear's default: kaiming_uniform(a = sqrt(5)).
    param(value("fc.weight", FLUID_F32, {kClasses, kFeatures}),
          initSpec(FLUID_INIT_KAIMING_UNIFORM, std::sqrt(1.0 / 3.0)), 0, 1),
    param(value("fc.bias", FLUID_F32, {kClasses}),
          initSpec(FLUID_INIT_ZEROS, 0), 0, 1),
    param(value("learning_rate", FLUID_F64, {}),
          initSpec(FLUID_INIT_CONSTANT, 0.1), 0, 0),
    param(value("global_step", FLUID_I64, {}), initSpec(FLUID_INIT_ZEROS, 0), 0,
          0),
};

const fluid_program_value kTrainArguments[] = {
    value("labels", FLUID_I64, {kBatch}),
    value("images", FLUID_F32, {kBatch, 1, 28, 28}),
};
const fluid_program_value kTrainResults[] = {
    value("loss", FLUID_F32, {}),
    value("learning_rate", FLUID_F64, {}),
};
const int64_t kTrainResultBuffers[] = {kLoss, kRate};
const int64_t kTrainBufferBytes[kNumTrainBuffers] = {
    /*kLogits=*/kBatch * kClasses * 4,
    /*kLoss=*/4,
    /*kGradLogits=*/kBatch *kClasses * 4,
    /*kGradWeight=*/kClasses *kFeatures * 4,
    /*kGradBias=*/kClasses * 4,
    /*kRate32=*/4,
    /*kRate=*/8,
    /*kOne=*/4,
    /*kOneStep=*/8,
};
const fluid_program_launch kTrainLaunches[] = {
    {"linear", "fc"},
    {"softmax_cross_entropy", "loss"},
    {"softmax_cross_entropy_grad", "loss"},
    {"matmul", "fc"},
    {"reduce_sum", "fc"},
    {"cast", "optimizer"},
    {"reshape", "optimizer"},
    {"sgd", "fc.weight"},
    {"sgd", "fc.bias"},
    {"add", "global_step"},
};

const fluid_program_value kPredictArguments[] = {
    value("images", FLUID_F32, {kBatch, 1, 28, 28}),
};
const fluid_program_value kPredictResults[] = {
    value("logits", FLUID_F32, {kBatch, kClasses}),
};
const int64_t kPredictResultBuffers[] = {0};
const int64_t kPredictBufferBytes[] = {kBatch * kClasses * 4};
const fluid_program_launch kPredictLaunches[] = {{"linear", "fc"}};

const fluid_program_function kFunctions[] = {
    {"train", 2, kTrainArguments, 2, kTrainResults, kTrainResultBuffers,
     kNumTrainBuffers, kTrainBufferBytes, 10, kTrainLaunches, trainInitialize,
     trainRun},
    {"predict", 1, kPredictArguments, 1, kPredictResults, kPredictResultBuffers,
     1, kPredictBufferBytes, 1, kPredictLaunches, nullptr, predictRun},
};

const fluid_program_info kProgram = {
    FLUID_PROGRAM_ABI_VERSION,
    BACKEND,
    "softmax-regression.cpp",
    "optimizer=sgd lr=0.1",
    kNumParams,
    kParams,
    2,
    kFunctions,
    /*train_function=*/0,
    /*predict_function=*/1,
    /*learning_rate_param=*/kLearningRate,
    /*step_param=*/kStep,
    /*classes=*/kClasses,
    /*workspace_limit_bytes=*/-1,
    /*tf32=*/1,
    /*params_file=*/nullptr,
    /*data_parallel=*/0,
};

} // namespace

extern "C" const fluid_program_info *fluid_program(void) { return &kProgram; }

int main(int argc, char **argv) {
  fluid_program_info program = *fluid_program();
  const char *variant = std::getenv("FLUID_DRIVER_TEST_VARIANT");
  std::string name = variant ? variant : "";
  if (name == "baked-lr") {
    program.learning_rate_param = -1;
  } else if (name == "no-predict") {
    program.predict_function = -1;
  } else if (name == "abi") {
    program.abi_version = FLUID_PROGRAM_ABI_VERSION + 1;
  } else if (name == "backend") {
    program.backend = 7;
  } else if (name == "cuda") {
    program.backend = FLUID_BACKEND_CUDA;
  } else if (name == "temporaries") {
    gTemporaries = true;
  } else if (name == "unwritten-rate") {
    gUnwrittenRate = true;
  } else if (name == "workspace-limit") {
    program.workspace_limit_bytes = int64_t(1) << 20;
  } else if (name == "fp32") {
    program.tf32 = 0;
  } else if (name == "imported") {
    static fluid_program_param params[kNumParams];
    std::copy_n(kParams, kNumParams, params);
    params[kWeight].init = initSpec(FLUID_INIT_ZEROS, 0);
    program.params = params;
    program.params_file = "softmax.safetensors";
  } else if (name == "bad-storage-order") {
    static fluid_program_param params[kNumParams];
    std::copy_n(kParams, kNumParams, params);
    params[kWeight].value.storage_order[0] = 1;
    params[kWeight].value.storage_order[1] = 1;
    program.params = params;
  } else if (name == "channels-last" || name == "images-order") {
    // Channels-last images of one channel are laid out as NCHW ones: the
    // program runs unchanged, the driver writes them as the program says.
    static fluid_program_value train[2], predict[1];
    static fluid_program_function functions[2];
    std::copy_n(kTrainArguments, 2, train);
    std::copy_n(kPredictArguments, 1, predict);
    std::copy_n(kFunctions, 2, functions);
    const int32_t order[4] = {0, 2, 3, 1}, batchLast[4] = {1, 2, 3, 0};
    std::copy_n(name == "channels-last" ? order : batchLast, 4,
                train[1].storage_order);
    std::copy_n(order, 4, predict[0].storage_order);
    functions[0].arguments = train;
    functions[1].arguments = predict;
    program.functions = functions;
  } else if (!name.empty()) {
    std::fprintf(stderr, "unknown FLUID_DRIVER_TEST_VARIANT '%s'\n",
                 name.c_str());
    return 2;
  }
  return fluid_driver_main(argc, argv, &program);
}
