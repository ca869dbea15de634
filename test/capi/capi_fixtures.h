// Helpers for the C ABI tests: a private temporary folder (0700, as the plugins' trust checks want), files with a
// given mode, and model files written through the policy runtime (test/plugin/model_fixture.cpp).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <catch2/catch.hpp>

#include "temp_dir.h"

extern "C" int rlsched_test_write_model(const char* path, unsigned seed);
extern "C" int rlsched_test_write_longest_first_model(const char* path);
extern "C" int rlsched_test_write_predicted_model(const char* path);

namespace rlsched::testing {

class PrivateDir {
 public:
  PrivateDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/rlsched_capi_XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~PrivateDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

  /// Writes `text` beside `name` and renames it over (as admins should), then sets `mode`.
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0644) const {
    const std::string target = file(name), tmp = target + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
      REQUIRE(out.good());
    }
    REQUIRE(::chmod(tmp.c_str(), mode) == 0);
    REQUIRE(::rename(tmp.c_str(), target.c_str()) == 0);
    return target;
  }

  std::string model(const std::string& name, unsigned seed) const {
    const std::string path = file(name);
    REQUIRE(rlsched_test_write_model(path.c_str(), seed) == 0);
    return path;
  }

 private:
  std::string path_;
};

using test::read_file;  // temp_dir.h

}  // namespace rlsched::testing
