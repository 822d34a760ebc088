//===- Passes.td - Fluid's passes ----------------------------------------===//
//
// Every pass of the project is declared here, with a one-line summary and a
// description, and lives in one file of passes/ named after its flag.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_PASSES_TD
#define FLUID_PASSES_TD

include "mlir/Pass/PassBase.td"

def FluidParamSummary : Pass<"fluid-param-summary", "::mlir::ModuleOp"> {
  let summary = "Print a table of the module's parameters and their sizes";
  let description = [{
    An analysis pass: prints one row per `fluid.param` (name, shape, element
    type, element count, bytes, initializer, trainable) and the totals, so a
    model's size can be checked against its reference implementation (e.g.
    torchvision's ResNet-50 has 25,557,032 parameters). The IR is unchanged.
    The table goes to standard error, or to the file named by `output`.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the table ('-' for standard error)">
  ];
}

#endif // FLUID_PASSES_TD
