#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "file_io.h"
#include "rlsched/policy/file_checks.h"

namespace rlsched::policy {
namespace {

FileIdentity identity_of(const struct stat& st) {
  FileIdentity id;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::int64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  id.mode = static_cast<std::uint32_t>(st.st_mode);
  return id;
}

Status errno_status(int error, const std::string& path, const char* doing) {
  std::string message = fmt::format("{}: cannot {}: {}", path, doing, std::strerror(error));
  return error == ENOENT ? Status::NotFound(std::move(message)) : Status::IoError(std::move(message));
}

/// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<FileIdentity> stat_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_status(errno, path, "stat");
  return identity_of(st);
}

Status check_not_writable_by_others(const std::string& path, const FileIdentity& file, const char* what) {
  if ((file.mode & (S_IWGRP | S_IWOTH)) == 0) return Status::Ok();
  return Status::InvalidInput(
      fmt::format("{}: refusing {} writable by group or others (mode {:04o}); run chmod go-w {}", path, what,
                  file.mode & 07777, path));
}

Status check_private_file(const std::string& path, const char* what) {
  auto file = stat_file(path);
  if (!file.ok()) return file.status();
  return check_not_writable_by_others(path, *file, what);
}

Result<FileContents> read_file(const std::string& path, bool require_private, const char* what) {
  const std::string open_what = fmt::format("open {}", what);
  Fd in{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) return errno_status(errno, path, open_what.c_str());
  // fstat of the open descriptor: the identity and mode belong to exactly the bytes read below, even if the path is
  // renamed over meanwhile.
  struct stat st {};
  if (::fstat(in.fd, &st) != 0) return errno_status(errno, path, "stat");
  if (!S_ISREG(st.st_mode)) return Status::InvalidInput(fmt::format("{}: {} is not a regular file", path, what));
  FileContents contents;
  contents.identity = identity_of(st);
  if (require_private) {
    if (Status s = check_not_writable_by_others(path, contents.identity, what); !s.ok()) return s;
  }
  contents.bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < contents.bytes.size()) {
    const ssize_t n = ::read(in.fd, contents.bytes.data() + done, contents.bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, path, fmt::format("read {}", what).c_str());
    if (n == 0) break;  // shrank while reading: the archive checks report it as truncated
    done += static_cast<std::size_t>(n);
  }
  contents.bytes.resize(done);
  return contents;
}

}  // namespace rlsched::policy
