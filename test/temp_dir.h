// Scratch directories and files for tests, removed with everything in them when the test (or process) ends.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace rlsched::test {

struct TempDir {
  explicit TempDir(const std::string& prefix = "rlsched_test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::filesystem::path path;
};

/// A file holding `content`, in a scratch directory of its own, removed when the test ends.
struct TempFile {
  TempFile(const std::string& name, const std::string& content) : path(dir.file(name)) {
    std::ofstream(path, std::ios::binary) << content;
  }
  TempDir dir{"rlsched_file"};
  std::string path;
};

/// A folder for this test process, removed when the process exits: for files that constants at namespace scope
/// name (CTest runs test cases as parallel processes, so the process id keeps them apart).
struct ProcessScratch {
  explicit ProcessScratch(const std::string& prefix)
      : path(std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(getpid()))) {}
  ~ProcessScratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ProcessScratch(const ProcessScratch&) = delete;
  ProcessScratch& operator=(const ProcessScratch&) = delete;
  std::filesystem::path path;
};

/// The file's bytes ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace rlsched::test
