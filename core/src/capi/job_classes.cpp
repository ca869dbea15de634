#include "capi/job_classes.h"

#include <pwd.h>

#include <vector>

namespace rlsched::capi {

std::string user_name_for_classes(const config::PluginConfig& config, std::uint32_t uid) {
  bool needed = false;
  for (const config::JobClass& c : config.job_classes) needed = needed || !c.user.empty();
  if (!needed) return {};
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found) != 0 || !found) return {};
  return found->pw_name;
}

const std::string& ClassCache::classify(const config::PluginConfig& config, std::string_view job_name,
                                        std::string_view account, std::uint32_t uid) {
  static const std::string kNone;
  if (config.job_classes.empty()) return kNone;
  if (config_ != &config || classes_.size() >= kMaxEntries) {
    classes_.clear();
    config_ = &config;
  }
  key_.assign(job_name);
  key_ += '\x1f';
  key_.append(account);
  key_ += '\x1f';
  key_ += std::to_string(uid);
  auto it = classes_.find(key_);
  if (it == classes_.end())
    it = classes_.emplace(key_, config.classify(job_name, account, user_name_for_classes(config, uid))).first;
  return it->second;
}

}  // namespace rlsched::capi
