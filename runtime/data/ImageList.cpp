//===- ImageList.cpp - The images and labels of a folder or a list file ---===//

#include "ImageList.h"

#include "FileReader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <limits>
#include <sys/stat.h>
#include <utility>

namespace fluid::rt::data {

namespace {

constexpr const char *kExtensions = ".jpg, .jpeg or .png";
// A list file longer than this is surely not one.
constexpr int64_t kMaxListBytes = int64_t(1) << 32;

std::string systemError() { return std::strerror(errno); }

bool hasImageExtension(const std::string &name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
  });
  for (const char *extension : {".jpg", ".jpeg", ".png"}) {
    size_t size = std::strlen(extension);
    if (lower.size() > size &&
        lower.compare(lower.size() - size, size, extension) == 0)
      return true;
  }
  return false;
}

/// `folder` + "/" + `name`, without doubling a trailing slash.
std::string join(const std::string &folder, const std::string &name) {
  if (!folder.empty() && folder.back() == '/')
    return folder + name;
  return folder + "/" + name;
}

/// A folder's entries (without . and ..), split into folders (links
/// followed, as os.scandir's is_dir()) and everything else.
struct FolderEntries {
  std::vector<std::string> folders, files;
};

FolderEntries readFolder(const std::string &folder) {
  struct Closer {
    DIR *dir;
    ~Closer() { closedir(dir); }
  };
  DIR *dir = opendir(folder.c_str());
  if (!dir)
    failIo(folder, "cannot read the folder: " + systemError());
  Closer closer{dir};
  FolderEntries entries;
  for (;;) {
    errno = 0;
    const dirent *entry = readdir(dir);
    if (!entry) {
      if (errno != 0)
        failIo(folder, "cannot read the folder: " + systemError());
      break;
    }
    std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    struct stat status;
    bool isFolder = stat(join(folder, name).c_str(), &status) == 0 &&
                    S_ISDIR(status.st_mode);
    (isFolder ? entries.folders : entries.files).push_back(std::move(name));
  }
  std::sort(entries.folders.begin(), entries.folders.end());
  std::sort(entries.files.begin(), entries.files.end());
  return entries;
}

/// A folder's identity, to cut a link back to a folder above it.
struct FolderId {
  dev_t device;
  ino_t inode;
  bool operator==(const FolderId &other) const {
    return device == other.device && inode == other.inode;
  }
};

/// Every folder under `folder` (itself included) with its image files, in
/// no particular order; `above` holds the folders it lies in.
void walk(const std::string &folder, std::vector<FolderId> &above,
          std::vector<std::pair<std::string, std::vector<std::string>>> &out) {
  struct stat status;
  if (stat(folder.c_str(), &status) != 0)
    failIo(folder, "cannot read the folder: " + systemError());
  FolderId id = {status.st_dev, status.st_ino};
  if (std::find(above.begin(), above.end(), id) != above.end())
    return;
  FolderEntries entries = readFolder(folder);
  std::vector<std::string> images;
  for (std::string &name : entries.files)
    if (hasImageExtension(name))
      images.push_back(std::move(name));
  out.emplace_back(folder, std::move(images));
  above.push_back(id);
  for (const std::string &name : entries.folders)
    walk(join(folder, name), above, out);
  above.pop_back();
}

std::string quoted(const std::string &text) {
  constexpr size_t kShown = 80;
  if (text.size() <= kShown)
    return "'" + text + "'";
  return "'" + text.substr(0, kShown) + "...'";
}

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

} // namespace

ImageList listImageFolder(const std::string &root) {
  FolderEntries top = readFolder(root);
  if (top.folders.empty())
    failFormat(root, "no class folders: an image folder holds one folder of "
                     "images per class");
  if (top.folders.size() > size_t(std::numeric_limits<int32_t>::max()))
    failFormat(root, "more class folders than labels can number");
  ImageList list;
  list.classes = int64_t(top.folders.size());
  for (size_t label = 0; label < top.folders.size(); ++label) {
    std::string classFolder = join(root, top.folders[label]);
    std::vector<FolderId> above;
    std::vector<std::pair<std::string, std::vector<std::string>>> folders;
    walk(classFolder, above, folders);
    std::sort(folders.begin(), folders.end());
    size_t before = list.paths.size();
    for (const auto &[folder, images] : folders)
      for (const std::string &name : images) {
        list.paths.push_back(join(folder, name));
        list.labels.push_back(int32_t(label));
      }
    if (list.paths.size() == before)
      failFormat(classFolder,
                 std::string("the class folder holds no images (") +
                     kExtensions + " files)");
  }
  return list;
}

ImageList readImageList(const std::string &listFile) {
  FileReader file(listFile);
  std::string text;
  char chunk[1 << 16];
  for (int64_t got; (got = file.read(chunk, sizeof chunk)) > 0;) {
    if (int64_t(text.size()) + got > kMaxListBytes)
      failFormat(listFile, "longer than a list file may be (" +
                               std::to_string(kMaxListBytes) + " bytes)");
    text.append(chunk, size_t(got));
  }
  size_t slash = listFile.rfind('/');
  std::string base =
      slash == std::string::npos ? "" : listFile.substr(0, slash + 1);

  ImageList list;
  int64_t largest = -1;
  size_t start = 0;
  for (int64_t number = 1; start < text.size(); ++number) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    start = end + 1;
    std::string where = listFile + ":" + std::to_string(number);
    if (line.find('\0') != std::string::npos)
      failFormat(where, "the line holds a NUL byte");
    size_t last = line.size();
    while (last > 0 && isBlank(line[last - 1]))
      --last;
    size_t first = 0;
    while (first < last && isBlank(line[first]))
      ++first;
    if (first == last)
      continue;
    line = line.substr(first, last - first);
    size_t gap = line.find_last_of(" \t");
    if (gap == std::string::npos)
      failFormat(where, "expected 'PATH LABEL', got " + quoted(line));
    std::string label = line.substr(gap + 1);
    size_t pathEnd = gap;
    while (pathEnd > 0 && isBlank(line[pathEnd - 1]))
      --pathEnd;
    std::string path = line.substr(0, pathEnd);
    bool digits = !label.empty() && label.size() <= 10 &&
                  std::all_of(label.begin(), label.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    int64_t value = digits ? std::stoll(label) : -1;
    if (value < 0 || value > std::numeric_limits<int32_t>::max())
      failFormat(where, "the label " + quoted(label) +
                            " is not an integer from 0 to 2147483647");
    list.paths.push_back(path[0] == '/' ? path : base + path);
    list.labels.push_back(int32_t(value));
    largest = std::max(largest, value);
  }
  if (list.paths.empty())
    failFormat(listFile, "the list file names no images");
  list.classes = largest + 1;
  return list;
}

} // namespace fluid::rt::data
