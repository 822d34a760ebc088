//===- ProgramView.cpp - A checked view of an emitted program -------------===//

#include "ProgramView.h"

#include "StorageOrder.h"
#include "Text.h"
#include "fluid/runtime/Error.h"

#include <cstring>
#include <set>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

const char *orEmpty(const char *text) { return text ? text : ""; }

std::string functionName(const fluid_program_function &function) {
  return "function '" + std::string(orEmpty(function.name)) + "'";
}

/// A value's name, dtype, rank, shape and size in bytes.
void checkValue(const std::string &what, const fluid_program_value &value) {
  if (!value.name || !value.name[0])
    fail(what + " has no name");
  std::string named = what + " '" + value.name + "'";
  if (fluid_dtype_size(value.dtype) <= 0)
    fail(named + " has unknown dtype " + std::to_string(value.dtype));
  if (value.rank < 0 || value.rank > FLUID_MAX_RANK)
    fail(named + " has rank " + std::to_string(value.rank) + " (at most " +
         std::to_string(FLUID_MAX_RANK) + ")");
  int64_t bytes = fluid_dtype_size(value.dtype);
  for (int32_t i = 0; i < value.rank; ++i) {
    if (value.shape[i] < 0)
      fail(named + " has a negative dimension");
    if (__builtin_mul_overflow(bytes, value.shape[i], &bytes))
      fail(named + " is larger than 2^63 bytes");
  }
  std::string problem = checkStorageOrder(value);
  if (!problem.empty())
    fail(named + " " + problem);
}

/// The storage order of a function's images: how a batch is laid out,
/// each image's pixels together.
std::array<int32_t, 4> imagesOrder(const std::string &function,
                                   const fluid_program_value &images) {
  std::array<int32_t, FLUID_MAX_RANK> order = storageOrder(images);
  if (order[0] != 0)
    fail(function + " stores its images in the order " + describeOrder(images) +
         ", which does not keep each image's " +
         "pixels together (dimension 0 first)");
  return {order[0], order[1], order[2], order[3]};
}

/// The index of the value named `name` in values[0, count), or -1.
int64_t findNamed(const fluid_program_value *values, int64_t count,
                  const char *name) {
  for (int64_t i = 0; i < count; ++i)
    if (std::strcmp(values[i].name, name) == 0)
      return i;
  return -1;
}

bool isRank0(const fluid_program_value &value, int32_t dtype) {
  return value.rank == 0 && value.dtype == dtype;
}

} // namespace

int64_t driver::valueBytes(const fluid_program_value &value) {
  int64_t bytes = fluid_dtype_size(value.dtype);
  for (int32_t i = 0; i < value.rank; ++i)
    if (__builtin_mul_overflow(bytes, value.shape[i], &bytes))
      fail(std::string("'") + value.name + "' is larger than 2^63 bytes");
  return bytes;
}

std::string driver::describe(const fluid_program_value &value) {
  return describe(value.dtype, value.rank, value.shape);
}

ProgramView::ProgramView(const fluid_program_info *program)
    : program_(program) {
  if (!program)
    fail("no program to run (fluid_program() returned NULL)");
  if (program->abi_version != FLUID_PROGRAM_ABI_VERSION)
    fail(format("the program was emitted for driver ABI version %d, but this "
                "runtime implements version %d; rebuild it with the "
                "fluid-compile of this runtime",
                program->abi_version, FLUID_PROGRAM_ABI_VERSION));
  if (program->backend != FLUID_BACKEND_CPU &&
      program->backend != FLUID_BACKEND_CUDA)
    fail(format("the program's backend %d is unknown (0: cpu, 1: cuda)",
                program->backend));
  if (program->num_functions < 1 || !program->functions)
    fail("the program has no functions");
  if (program->train_function < 0 ||
      program->train_function >= program->num_functions)
    fail(format("the program's training function %lld does not exist",
                static_cast<long long>(program->train_function)));
  if (program->predict_function < -1 ||
      program->predict_function >= program->num_functions ||
      program->predict_function == program->train_function)
    fail(format("the program's predict function %lld is invalid",
                static_cast<long long>(program->predict_function)));
  if (program->classes < 1)
    fail(format("the program has %lld classes",
                static_cast<long long>(program->classes)));
  checkParams();
  for (int64_t i = 0; i < program->num_functions; ++i)
    checkFunction(i);
  checkTrain();
  checkPredict();
}

void ProgramView::checkParams() {
  const fluid_program_info &p = *program_;
  if (p.num_params < 0 || (p.num_params > 0 && !p.params))
    fail("the program's parameter list is invalid");
  std::set<std::string> names;
  for (int64_t i = 0; i < p.num_params; ++i) {
    checkValue("parameter " + std::to_string(i), p.params[i].value);
    if (!names.insert(p.params[i].value.name).second)
      fail(std::string("two parameters are named '") + p.params[i].value.name +
           "'");
  }
  auto checkSpecial = [&](int64_t index, int32_t dtype, const char *role) {
    if (index == -1)
      return;
    if (index < 0 || index >= p.num_params)
      fail(format("the program's %s parameter %lld does not exist", role,
                  static_cast<long long>(index)));
    if (!isRank0(p.params[index].value, dtype))
      fail(std::string("the ") + role + " parameter '" +
           p.params[index].value.name + "' is " +
           describe(p.params[index].value) + ", not [] " + dtypeName(dtype));
  };
  checkSpecial(p.learning_rate_param, FLUID_F64, "learning-rate");
  checkSpecial(p.step_param, FLUID_I64, "step-counter");
}

void ProgramView::checkFunction(int64_t index) {
  const fluid_program_function &f = program_->functions[index];
  if (!f.name)
    fail(format("function %lld has no name", static_cast<long long>(index)));
  std::string name = functionName(f);
  if (f.num_arguments < 0 || (f.num_arguments > 0 && !f.arguments) ||
      f.num_results < 0 || (f.num_results > 0 && !f.results) ||
      (f.num_results > 0 && !f.result_buffers) || f.num_buffers < 0 ||
      (f.num_buffers > 0 && !f.buffer_bytes) || f.num_launches < 0 ||
      (f.num_launches > 0 && !f.launches) || !f.run)
    fail(name + " is malformed (a count or list is missing)");
  for (int64_t i = 0; i < f.num_arguments; ++i)
    checkValue(name + " argument", f.arguments[i]);
  int64_t total = 0;
  for (int64_t i = 0; i < f.num_buffers; ++i)
    if (f.buffer_bytes[i] < 0 ||
        __builtin_add_overflow(total, f.buffer_bytes[i], &total))
      fail(name + " has a buffer of invalid size");
  for (int64_t i = 0; i < f.num_results; ++i) {
    checkValue(name + " result", f.results[i]);
    if (isPermuted(f.results[i]))
      fail(name + " result '" + f.results[i].name +
           "' is stored permuted; results must not be");
    int64_t buffer = f.result_buffers[i];
    if (buffer < 0 || buffer >= f.num_buffers)
      fail(name + " result '" + f.results[i].name +
           "' lives in no buffer of the function");
    if (f.buffer_bytes[buffer] < valueBytes(f.results[i]))
      fail(name + " result '" + f.results[i].name + "' (" +
           describe(f.results[i]) + ") does not fit its buffer of " +
           std::to_string(f.buffer_bytes[buffer]) + " bytes");
  }
  for (int64_t i = 0; i < f.num_launches; ++i)
    if (!f.launches[i].kernel)
      fail(name + " has a launch without a kernel name");
}

void ProgramView::checkTrain() {
  const fluid_program_function &f = train();
  std::string name = functionName(f);
  int64_t images = findNamed(f.arguments, f.num_arguments, "images");
  int64_t labels = findNamed(f.arguments, f.num_arguments, "labels");
  if (f.num_arguments != 2 || images < 0 || labels < 0)
    fail("the training " + name +
         " must take two arguments named \"images\" and \"labels\"");
  const fluid_program_value &imagesValue = f.arguments[images];
  const fluid_program_value &labelsValue = f.arguments[labels];
  if (imagesValue.dtype != FLUID_F32 || imagesValue.rank != 4 ||
      labelsValue.dtype != FLUID_I64 || labelsValue.rank != 1 ||
      labelsValue.shape[0] != imagesValue.shape[0] || imagesValue.shape[0] < 1)
    fail("the training " + name +
         " must take f32 images [N,C,H,W] and i64 labels [N] (N >= 1), not " +
         describe(imagesValue) + " and " + describe(labelsValue));
  for (int i = 1; i < 4; ++i)
    if (imagesValue.shape[i] < 1)
      fail("the training " + name + " takes empty images " +
           describe(imagesValue));
  batch_ = imagesValue.shape[0];
  for (int i = 0; i < 3; ++i)
    imageShape_[i] = imagesValue.shape[i + 1];
  train_.imagesArgument = images;
  train_.imagesOrder = imagesOrder("the training " + name, imagesValue);
  train_.labelsArgument = labels;
  if (isPermuted(labelsValue))
    fail("the training " + name + " stores its labels permuted");

  int64_t loss = findNamed(f.results, f.num_results, "loss");
  int64_t rate = findNamed(f.results, f.num_results, "learning_rate");
  if (loss < 0 || rate < 0)
    fail("the training " + name +
         " must return results named \"loss\" and \"learning_rate\"");
  if (!isRank0(f.results[loss], FLUID_F32) &&
      !isRank0(f.results[loss], FLUID_F64))
    fail("the training " + name + " returns a loss of " +
         describe(f.results[loss]) + ", not [] f32 or [] f64");
  if (!isRank0(f.results[rate], FLUID_F64))
    fail("the training " + name + " returns a learning rate of " +
         describe(f.results[rate]) + ", not [] f64");
  train_.lossBuffer = f.result_buffers[loss];
  train_.lossDtype = f.results[loss].dtype;
  train_.learningRateBuffer = f.result_buffers[rate];
}

void ProgramView::checkPredict() {
  const fluid_program_function *f = predict();
  if (!f)
    return;
  std::string name = functionName(*f);
  int64_t images = findNamed(f->arguments, f->num_arguments, "images");
  if (f->num_arguments != 1 || images < 0)
    fail("the predict " + name + " must take one argument named \"images\"");
  const fluid_program_value &value = f->arguments[images];
  bool sameImages =
      value.dtype == FLUID_F32 && value.rank == 4 && value.shape[0] >= 1;
  for (int i = 0; sameImages && i < 3; ++i)
    sameImages = value.shape[i + 1] == imageShape_[i];
  if (!sameImages)
    fail("the predict " + name + " takes images " + describe(value) +
         ", not f32 [N," + std::to_string(imageShape_[0]) + "," +
         std::to_string(imageShape_[1]) + "," + std::to_string(imageShape_[2]) +
         "] as the training function");
  int64_t logits = findNamed(f->results, f->num_results, "logits");
  if (logits < 0)
    fail("the predict " + name + " must return a result named \"logits\"");
  const fluid_program_value &out = f->results[logits];
  if ((out.dtype != FLUID_F32 && out.dtype != FLUID_F64) || out.rank != 2 ||
      out.shape[0] != value.shape[0] || out.shape[1] != program_->classes)
    fail("the predict " + name + " returns logits " + describe(out) +
         ", not [" + std::to_string(value.shape[0]) + "," +
         std::to_string(program_->classes) + "] f32 or f64");
  predict_.imagesArgument = images;
  predict_.imagesOrder = imagesOrder("the predict " + name, value);
  predict_.logitsBuffer = f->result_buffers[logits];
  predict_.logitsDtype = out.dtype;
  predict_.batch = value.shape[0];
}

int64_t ProgramView::totalParamBytes() const {
  int64_t total = 0;
  for (int64_t i = 0; i < numParams(); ++i)
    total += paramBytes(i);
  return total;
}

void ProgramView::print(std::FILE *out) const {
  const fluid_program_info &p = *program_;
  std::fprintf(out, "program: %s\n", orEmpty(p.source));
  std::fprintf(out, "backend: %s\n", backendName());
  std::fprintf(out, "abi version: %d\n", p.abi_version);
  std::fprintf(out, "options: %s\n", orEmpty(p.options));
  if (p.params_file)
    std::fprintf(out,
                 "imported: parameters are zero placeholders for the values "
                 "in %s (--init-from)\n",
                 p.params_file);
  if (p.data_parallel)
    std::fprintf(out, "data parallel: gradients averaged over the ranks of "
                      "mpirun -np N (batch is per rank)\n");
  const fluid_program_value &images = train().arguments[train_.imagesArgument];
  std::string stored = isPermuted(images) ? " (stored in the order " +
                                                describeOrder(images) + ")"
                                          : "";
  std::fprintf(out, "batch: %lld, images %lldx%lldx%lld%s, %lld classes\n",
               static_cast<long long>(batch_),
               static_cast<long long>(imageShape_[0]),
               static_cast<long long>(imageShape_[1]),
               static_cast<long long>(imageShape_[2]), stored.c_str(),
               static_cast<long long>(p.classes));
  int64_t trainable = 0, state = 0;
  for (int64_t i = 0; i < p.num_params; ++i) {
    trainable += p.params[i].trainable != 0;
    state += p.params[i].optimizer_state != 0;
  }
  int64_t bytes = totalParamBytes();
  std::fprintf(out,
               "parameters: %lld (%lld trainable, %lld optimizer state), "
               "%lld bytes (%.1f MiB)\n",
               static_cast<long long>(p.num_params),
               static_cast<long long>(trainable), static_cast<long long>(state),
               static_cast<long long>(bytes), mebibytes(bytes));
  for (int64_t i = 0; i < p.num_params; ++i) {
    const fluid_program_param &param = p.params[i];
    std::string stored =
        isPermuted(param.value)
            ? ", stored in the order " + describeOrder(param.value)
            : "";
    std::fprintf(out, "  %s %s, %lld bytes%s%s%s\n", param.value.name,
                 describe(param.value).c_str(),
                 static_cast<long long>(paramBytes(i)), stored.c_str(),
                 param.trainable ? ", trainable" : "",
                 param.optimizer_state ? ", optimizer state" : "");
  }
  if (p.learning_rate_param >= 0)
    std::fprintf(out, "learning rate: parameter '%s' (--lr replaces it)\n",
                 p.params[p.learning_rate_param].value.name);
  else
    std::fprintf(out, "learning rate: baked into the program (no --lr)\n");
  if (p.step_param >= 0)
    std::fprintf(out, "step counter: parameter '%s'\n",
                 p.params[p.step_param].value.name);
  else
    std::fprintf(out, "step counter: none (every run starts at step 0)\n");
  if (p.workspace_limit_bytes >= 0)
    std::fprintf(out, "workspace limit: %lld bytes (%.1f MiB)\n",
                 static_cast<long long>(p.workspace_limit_bytes),
                 mebibytes(p.workspace_limit_bytes));
  else
    std::fprintf(out, "workspace limit: none\n");
  std::fprintf(out, "f32 convolutions and products: %s\n",
               p.tf32 ? "TF32 tensor cores (--no-tf32: full f32)"
                      : "full f32 (--precision fp32; --tf32: TF32)");
  for (int64_t i = 0; i < p.num_functions; ++i) {
    const fluid_program_function &f = p.functions[i];
    int64_t buffers = 0;
    for (int64_t b = 0; b < f.num_buffers; ++b)
      buffers += f.buffer_bytes[b];
    const char *role = i == p.train_function     ? "training step"
                       : i == p.predict_function ? "predict"
                                                 : "unused";
    std::fprintf(out,
                 "function '%s' (%s): %lld arguments, %lld results, %lld "
                 "buffers of %lld bytes (%.1f MiB), %lld launches\n",
                 f.name, role, static_cast<long long>(f.num_arguments),
                 static_cast<long long>(f.num_results),
                 static_cast<long long>(f.num_buffers),
                 static_cast<long long>(buffers), mebibytes(buffers),
                 static_cast<long long>(f.num_launches));
  }
}
