//===- EntryPoint.cpp - Which function of a program is the model ----------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"

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
