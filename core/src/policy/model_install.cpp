#include "rlsched/policy/model_install.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "file_io.h"
#include "rlsched/policy/model.h"

namespace rlsched::policy {
namespace {

namespace fs = std::filesystem;

std::string card_of(const std::string& model) {
  return fs::path(model).replace_extension(".md").string();
}

/// The weights' sha256 of a model file, after every check the plugin makes. `what` names the file's role.
Result<std::string> verify(const std::string& path, const char* what) {
  auto model = load_model(path);
  if (!model.ok()) return Status::InvalidInput(fmt::format("{} refused: {}", what, model.status().message()));
  return (*model)->metadata().weights_sha256;
}

/// Writes `bytes` to a new file beside `target` (same folder: the final rename stays on one file system), mode 0644,
/// synced. \return its path.
Result<std::string> write_beside(const std::string& target, const std::string& bytes) {
  std::string tmp = target + ".tmp-XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return Status::IoError(fmt::format("{}: cannot create a file beside it: {}", target, errno_text()));
  bool ok = fchmod(fd, 0644) == 0;
  for (std::size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && fsync(fd) == 0;
  const std::string why = errno_text();
  close(fd);
  if (!ok) {
    unlink(tmp.c_str());
    return Status::IoError(fmt::format("{}: cannot write: {}", tmp, why));
  }
  return tmp;
}

/// Makes `keep` another name of `path`'s current file (replacing what `keep` was), without a moment where `keep`
/// is missing or partial.
Status keep_as(const std::string& path, const std::string& keep) {
  std::string tmp = keep + ".tmp-XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return Status::IoError(fmt::format("{}: cannot create: {}", keep, errno_text()));
  close(fd);
  unlink(tmp.c_str());
  if (link(path.c_str(), tmp.c_str()) != 0)
    return Status::IoError(fmt::format("{}: cannot link to {}: {}", path, tmp, errno_text()));
  if (rename(tmp.c_str(), keep.c_str()) != 0) {
    const std::string why = errno_text();
    unlink(tmp.c_str());
    return Status::IoError(fmt::format("{}: cannot rename to {}: {}", tmp, keep, why));
  }
  return Status::Ok();
}

void sync_folder(const std::string& path) {
  const std::string folder = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
  const int fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

bool exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

}  // namespace

std::string previous_path(const std::string& model) { return model + ".previous"; }
std::string rolled_back_path(const std::string& model) { return model + ".rolled-back"; }

Result<InstallResult> promote_model(const std::string& candidate, const std::string& model) {
  auto sha = verify(candidate, "candidate");
  if (!sha.ok()) return sha.status();
  auto bytes = read_file(candidate, /*require_private=*/false, "model file");
  if (!bytes.ok()) return bytes.status();
  auto copy = write_beside(model, bytes->bytes);
  if (!copy.ok()) return copy.status();
  // What slurmctld will read is the copy: check it too (a full disk or a racing writer would show here).
  if (auto copied = verify(*copy, "copy"); !copied.ok() || *copied != *sha) {
    unlink(copy->c_str());
    return copied.ok() ? Status::IoError(fmt::format("{}: the copy differs from {}", *copy, candidate))
                       : copied.status();
  }
  InstallResult r;
  r.model = model;
  r.sha256 = *sha;
  if (exists(model)) {
    if (auto current = verify(model, "current model"); current.ok()) r.kept_sha256 = *current;
    if (Status s = keep_as(model, previous_path(model)); !s.ok()) {
      unlink(copy->c_str());
      return s;
    }
    r.kept = previous_path(model);
  }
  if (rename(copy->c_str(), model.c_str()) != 0) {
    const std::string why = errno_text();
    unlink(copy->c_str());
    return Status::IoError(fmt::format("{}: cannot rename over {}: {}", *copy, model, why));
  }
  sync_folder(model);
  // The card is documentation: a failure to move it leaves the model installed.
  if (auto card = read_file(card_of(candidate), false, "model card"); card.ok()) {
    if (exists(card_of(model))) (void)keep_as(card_of(model), previous_path(model) + ".md");
    if (auto tmp = write_beside(card_of(model), card->bytes); tmp.ok() && rename(tmp->c_str(), card_of(model).c_str()) != 0)
      unlink(tmp->c_str());
  }
  return r;
}

Result<InstallResult> rollback_model(const std::string& model) {
  const std::string previous = previous_path(model);
  if (!exists(previous))
    return Status::NotFound(fmt::format("{}: no previous model to roll back to (rlsched promote keeps one)", previous));
  auto sha = verify(previous, "previous model");
  if (!sha.ok()) return sha.status();
  InstallResult r;
  r.model = model;
  r.sha256 = *sha;
  if (exists(model)) {
    if (auto current = verify(model, "current model"); current.ok()) r.kept_sha256 = *current;
    if (Status s = keep_as(model, rolled_back_path(model)); !s.ok()) return s;
    r.kept = rolled_back_path(model);
  }
  if (rename(previous.c_str(), model.c_str()) != 0)
    return Status::IoError(fmt::format("{}: cannot rename over {}: {}", previous, model, errno_text()));
  sync_folder(model);
  if (exists(previous + ".md")) {
    if (exists(card_of(model))) (void)keep_as(card_of(model), rolled_back_path(model) + ".md");
    (void)rename((previous + ".md").c_str(), card_of(model).c_str());
  }
  return r;
}

}  // namespace rlsched::policy
