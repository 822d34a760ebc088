//===- ParamsFile.h - Programs whose parameters are placeholders ----------===//
//
// fluid-import-onnx declares every parameter of the program it writes with
// an all-zero placeholder initializer and writes the values (the graph's
// initializers) to a safetensors file beside it. It records that file, the
// path as the importer was given it, in the string attribute
// kParamsFileAttrName of the module, so that the tools that run or train
// the program can tell placeholders from a model's own initializers:
// fluid-run and fluid-train warn when trainable placeholders are used
// without values, and fluid-compile passes the file to the executable
// (fluid_program_info::params_file), whose driver warns likewise. The name
// lies outside the fluid dialect's namespace, which admits no module
// attribute.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_SUPPORT_PARAMSFILE_H
#define FLUID_SUPPORT_PARAMSFILE_H

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::fluid {

constexpr StringLiteral kParamsFileAttrName = "onnx.params_file";

/// The parameter file `module` was imported with, or "" for a program
/// whose initializers are its own.
inline StringRef getParamsFile(ModuleOp module) {
  if (auto file = module->getAttrOfType<StringAttr>(kParamsFileAttrName))
    return file.getValue();
  return "";
}

/// The trainable model parameters of `module` (optimizer state aside),
/// into `trainable`, and how many of them are zero placeholders that
/// `loaded` says were given no value: all-zero initializers of a program
/// with a parameter file. 0 for other programs.
inline int64_t countPlaceholders(ModuleOp module,
                                 llvm::function_ref<bool(ParamOp)> loaded,
                                 int64_t &trainable) {
  trainable = 0;
  int64_t placeholders = 0;
  bool imported = !getParamsFile(module).empty();
  for (ParamOp param : module.getOps<ParamOp>()) {
    if (!param.getTrainable() || param->hasAttr(kOptimizerStateAttrName))
      continue;
    ++trainable;
    placeholders += imported && param.getInit().getKind() == InitKind::Zeros &&
                    !loaded(param);
  }
  return placeholders;
}

} // namespace mlir::fluid

#endif // FLUID_SUPPORT_PARAMSFILE_H
