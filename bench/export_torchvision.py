#!/usr/bin/env python3
"""Exports a torchvision classification model to ONNX as the README says
(eval mode, opset 17, TrainingMode.PRESERVE, no constant folding, input
"images" with a dynamic batch), seeded random weights, for the GPU
benchmarks of imported models (bench/onnx-models.sh).

  usage: export_torchvision.py MODEL OUT.onnx [--image-size 224] [--opset 17]
"""

import argparse
import warnings

import torch
import torchvision


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--opset", type=int, default=17)
    args = p.parse_args()
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    net = getattr(torchvision.models, args.model)(weights=None).eval()
    images = torch.randn(1, 3, args.image_size, args.image_size)
    torch.onnx.export(net, images, args.out, opset_version=args.opset,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False, input_names=["images"],
                      output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"},
                                    "logits": {0: "batch"}})
    print("exported %s (opset %d) to %s" % (args.model, args.opset, args.out))


if __name__ == "__main__":
    main()
