//===- FluidAttrs.td - Attributes and enums of the fluid dialect ---------===//

#ifndef FLUID_ATTRS_TD
#define FLUID_ATTRS_TD

include "fluid/Dialect/Fluid/IR/FluidBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Fluid_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
    I32EnumAttrCase<"Zeros", 0, "zeros">,
    I32EnumAttrCase<"Ones", 1, "ones">,
    I32EnumAttrCase<"Constant", 2, "constant">,
    I32EnumAttrCase<"Normal", 3, "normal">,
    I32EnumAttrCase<"Uniform", 4, "uniform">,
    I32EnumAttrCase<"KaimingNormal", 5, "kaiming_normal">,
    I32EnumAttrCase<"KaimingUniform", 6, "kaiming_uniform">,
    I32EnumAttrCase<"XavierUniform", 7, "xavier_uniform">]> {
  let cppNamespace = "::mlir::fluid";
  let genSpecializedAttr = 0;
}

def Fluid_FanMode : I32EnumAttr<"FanMode", "fan used by Kaiming initializers", [
    I32EnumAttrCase<"FanIn", 0, "fan_in">,
    I32EnumAttrCase<"FanOut", 1, "fan_out">]> {
  let cppNamespace = "::mlir::fluid";
  let genSpecializedAttr = 0;
}

def Fluid_Reduction : I32EnumAttr<"Reduction", "loss reduction", [
    I32EnumAttrCase<"Mean", 0, "mean">,
    I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"None", 2, "none">]> {
  let cppNamespace = "::mlir::fluid";
  let genSpecializedAttr = 0;
}

def Fluid_ReductionAttr : EnumAttr<Fluid_Dialect, Fluid_Reduction, "reduction">;

//===----------------------------------------------------------------------===//
// Initializer
//===----------------------------------------------------------------------===//

def Fluid_InitializerAttr : AttrDef<Fluid_Dialect, "Initializer"> {
  let mnemonic = "init";
  let summary = "How a parameter's initial value is drawn";
  let description = [{
    The initial value of a `fluid.param`, following PyTorch's `torch.nn.init`
    conventions (fan_in = dim 1 x receptive field, fan_out = dim 0 x
    receptive field):

    ```
    zeros | ones | constant(V) | normal(std = S) | uniform(LOW, HIGH)
    | kaiming_normal(fan_in|fan_out, gain = G)
    | kaiming_uniform(fan_in|fan_out, gain = G)
    | xavier_uniform(gain = G)
    ```

    Standalone it is written `#fluid.init<kaiming_normal(fan_out, gain = 1.4142135623730951)>`;
    inside `fluid.param` the `#fluid.init<...>` wrapper is dropped.
    `a` holds the constant, the std, the lower bound or the gain; `b` the
    upper bound of `uniform`.
  }];
  let parameters = (ins
    "::mlir::fluid::InitKind":$kind,
    APFloatParameter<"constant, std, lower bound or gain">:$a,
    APFloatParameter<"upper bound of uniform">:$b,
    "::mlir::fluid::FanMode":$fanMode);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::fluid::InitKind":$kind, "double":$a,
                     "double":$b, "::mlir::fluid::FanMode":$fanMode), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(a), ::llvm::APFloat(b),
                   fanMode);
    }]>
  ];
  let extraClassDeclaration = [{
    double getAValue() const { return getA().convertToDouble(); }
    double getBValue() const { return getB().convertToDouble(); }
    /// Whether this initializer needs fan_in/fan_out (rank >= 2).
    bool usesFans() const;
    /// Parses and prints the body (`kaiming_normal(fan_out, gain = 2.0)`),
    /// shared by the attribute and by `fluid.param`'s assembly.
    static ::mlir::Attribute parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

#endif // FLUID_ATTRS_TD
