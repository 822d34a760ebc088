//===- EntryPoint.cpp - Which function of a program is the model ----------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

FailureOr<func::FuncOp> mlir::fluid::findEntryFunction(ModuleOp module,
                                                       StringRef name,
                                                       std::string &why) {
  SmallVector<func::FuncOp> all, marked, visible;
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    all.push_back(func);
    if (func->hasAttr(kEntryAttrName))
      marked.push_back(func);
    if (func.isPublic())
      visible.push_back(func);
  }
  std::string names;
  for (func::FuncOp func : all)
    names += (names.empty() ? "@" : ", @") + func.getSymName().str();
  if (names.empty())
    names = "none";
  if (!name.empty()) {
    for (func::FuncOp func : all)
      if (func.getSymName() == name)
        return func;
    why = "no function @" + name.str() + "; the program has " + names;
    return failure();
  }
  if (marked.size() == 1)
    return marked.front();
  if (marked.empty() && visible.size() == 1)
    return visible.front();
  why = "cannot choose the entry function among " + names;
  return failure();
}

bool mlir::fluid::isTrainingStep(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, kLearningRateResultAttrName))
      return true;
  return false;
}

FailureOr<mlir::fluid::ParamOp>
mlir::fluid::declareStateParam(ModuleOp module, OpBuilder &builder,
                               ParamOp after, StringRef name,
                               RankedTensorType type, StringRef pass) {
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto param = dyn_cast<ParamOp>(existing);
    if (param && param.getType() == type && !param.getTrainable())
      return param;
    return existing->emitError()
           << pass << " needs the name @" << name << " for a non-trainable "
           << type << " parameter";
  }
  OpBuilder::InsertionGuard guard(builder);
  if (after)
    builder.setInsertionPointAfter(after);
  else
    builder.setInsertionPointToStart(module.getBody());
  auto zeros = InitializerAttr::get(builder.getContext(), InitKind::Zeros, 0.0,
                                    0.0, FanMode::FanIn);
  Location loc = after ? after.getLoc() : module.getLoc();
  auto param = ParamOp::create(builder, loc, builder.getStringAttr(name),
                               TypeAttr::get(type), zeros,
                               /*trainable=*/builder.getBoolAttr(false),
                               /*lr_mult=*/builder.getF64FloatAttr(1.0),
                               /*decay_mult=*/builder.getF64FloatAttr(1.0),
                               /*storage_order=*/nullptr);
  param->setAttr(kOptimizerStateAttrName, builder.getUnitAttr());
  return param;
}
