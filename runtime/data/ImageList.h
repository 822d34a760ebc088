//===- ImageList.h - The images and labels of a folder or a list file -----===//
//
// An image dataset is a list of files and labels, read once when it opens:
//
// An image folder, as torchvision's ImageFolder sees it: each subfolder
// (symbolic links followed) is a class, the classes sorted by name (byte
// order, as Python sorts str) and numbered from 0; a class's images are the
// files under its folder, at any depth, whose names end in .jpg, .jpeg or
// .png (any case), in the order of Python's sorted(os.walk(folder)): folders
// by path, the files of each by name. Other files, and files directly in the
// root folder, are ignored. A link back to a folder it lies in is not
// followed (os.walk would follow it until the path grows too long).
//
// A list file: one image per line, "PATH LABEL" (PATH relative to the list
// file's folder unless absolute, and may hold spaces; LABEL a decimal
// integer from 0 to 2147483647, after the last run of spaces or tabs); blank
// lines are skipped; the classes are the largest label + 1.
//
// Errors (before anything is decoded): a root folder without class folders,
// a class folder without images, an empty list file, a list-file line that
// does not parse (named by its number), a folder or file that cannot be
// read.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_IMAGELIST_H
#define FLUID_RUNTIME_DATA_IMAGELIST_H

#include <cstdint>
#include <string>
#include <vector>

namespace fluid::rt::data {

struct ImageList {
  std::vector<std::string> paths;
  std::vector<int32_t> labels;
  int64_t classes = 0;
};

/// The images of the class folders of `root`.
ImageList listImageFolder(const std::string &root);

/// The images a list file names.
ImageList readImageList(const std::string &listFile);

} // namespace fluid::rt::data

#endif // FLUID_RUNTIME_DATA_IMAGELIST_H
