// Reading a whole file together with the identity (fstat) of exactly the bytes read; errno in messages.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

#include "rlsched/policy/file_checks.h"
#include "rlsched/status.h"

namespace rlsched::policy {

struct FileContents {
  std::string bytes;
  FileIdentity identity;
};

/// \return NotFound "PATH: cannot open model file: No such file or directory", IoError for other failures, and
/// InvalidInput when `require_private` and the file is writable by group or others.
Result<FileContents> read_file(const std::string& path, bool require_private, const char* what);

/// strerror(errno) of the call just made.
inline std::string errno_text() { return std::strerror(errno); }

}  // namespace rlsched::policy
