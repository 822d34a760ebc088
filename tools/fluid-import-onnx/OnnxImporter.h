//===- OnnxImporter.h - An ONNX graph as a fluid program --------*- C++ -*-===//
//
// Turns an ONNX model (read by OnnxReader.cpp into plain structures) into a
// fluid module:
// - float initializers that the graph computes with become `fluid.param`s
//   named as in the graph (batch-norm running statistics are not
//   trainable); so does each output of an Identity of one, with its own
//   copy of the value: torch.onnx merges initializers of equal values into
//   one, read through Identity nodes whose outputs carry the state-dict
//   names, and each of those is a weight of its own. An initializer that
//   several nodes read directly (tied weights) is one parameter. Integer
//   initializers are compile-time constants;
// - graph inputs become the arguments of `@forward`, which returns the graph
//   outputs, with batch norm in inference form;
// - with a loss, `@loss` takes the same arguments plus the labels and
//   returns the mean softmax cross-entropy of the graph's single output,
//   with batch norm in training form writing back its running statistics.
//
// Shapes are static: dynamic batch dimensions of the inputs take the given
// batch size; every other dimension follows from fluid's shape rules, and
// shape computations on known values (Shape, Gather, Slice, Unsqueeze,
// Concat, Cast, integer arithmetic) are folded. Errors are emitted as MLIR
// diagnostics, prefixed with the node they concern; nothing aborts.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXIMPORTER_H
#define FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXIMPORTER_H

#include "OnnxModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <vector>

namespace mlir::fluid::onnx_import {

struct ImportOptions {
  /// The size of dynamic batch dimensions (dimension 0 of graph inputs).
  std::optional<int64_t> batch;
  /// Whether to add `@loss`: softmax cross-entropy against integer labels.
  bool softmaxCrossEntropyLoss = false;
  /// How errors are prefixed: "TOOL: error: MODEL: ...".
  std::string toolName = "fluid-import-onnx";
  std::string modelName;
};

/// A `fluid.param` and the initializer that holds its initial value.
struct ImportedParam {
  /// The parameter's name: the initializer's, or the Identity output's.
  std::string name;
  const ::fluid::onnx_model::Tensor *value = nullptr;
};

struct ImportedProgram {
  OwningOpRef<ModuleOp> module;
  /// The parameters in the order of the module: the initializers that are
  /// parameters in declaration order, then the Identity outputs in node
  /// order; their values go into the parameter file.
  std::vector<ImportedParam> params;
};

/// Imports `model`; on failure, every error has been printed to standard
/// error and the result is null.
ImportedProgram importModel(MLIRContext &context,
                            const ::fluid::onnx_model::Model &model,
                            const ImportOptions &options);

/// The ONNX operators the importer supports, sorted, comma-separated.
std::string getSupportedOperators();

/// Writes the operator table, one operator a line, sorted by name: its
/// name, the opset versions that (re)define it up to opset 17 and the
/// attributes the importer reads, separated by tabs, the lists by commas.
void printOperatorTable(llvm::raw_ostream &os);

/// Writes `text` with its control characters and the bytes that are not
/// UTF-8 as \XX (hexadecimal), as MLIR escapes them: a name taken from the
/// model cannot break an error message into several lines.
void printEscaped(llvm::raw_ostream &os, llvm::StringRef text);

} // namespace mlir::fluid::onnx_import

#endif // FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXIMPORTER_H
