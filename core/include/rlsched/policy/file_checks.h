// What the policy runtime checks on files before it trusts them: which version of a file it read (for hot reload)
// and whether anyone but the owner could have written it (the Slurm plugin refuses such files).
#pragma once

#include <cstdint>
#include <string>

#include "rlsched/status.h"

namespace rlsched::policy {

/// Identifies one version of a file: replacing it (rename over it) changes the inode, rewriting it in place changes
/// the size or the modification time. The mode is part of it so that fixing a file's permissions (chmod go-w) makes
/// hot reload try it again.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = -1;
  std::int64_t mtime_ns = 0;
  std::uint32_t mode = 0;  ///< st_mode

  bool operator==(const FileIdentity& o) const {
    return device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns && mode == o.mode;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};

/// stat(2) of `path`. \return NotFound / IoError "PATH: cannot stat: <strerror>".
Result<FileIdentity> stat_file(const std::string& path);

/// \return InvalidInput "PATH: refusing <what> writable by group or others (mode 0666); run chmod go-w PATH" when
/// the mode has S_IWGRP or S_IWOTH set. `what` names the file's role ("model file", "config file").
Status check_not_writable_by_others(const std::string& path, const FileIdentity& file, const char* what);

/// stat_file + check_not_writable_by_others: for the config file the Slurm plugin reads.
Status check_private_file(const std::string& path, const char* what = "file");

}  // namespace rlsched::policy
