// Job classes (rlsched.yaml job_classes) of the jobs job_submit/rlsched sees: the job being submitted and every
// queued job whose work it counts. The queue repeats a handful of (name, account, user) triples, so lookups are
// cached; glob matching and user-name lookups (NSS) then run once per triple, not once per job and submit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rlsched/plugin_config.h"

namespace rlsched::capi {

/// The user's login name, looked up only when some class has a user pattern ("" otherwise, or when unknown).
std::string user_name_for_classes(const config::PluginConfig& config, std::uint32_t uid);

class ClassCache {
 public:
  /// \return the job's class under `config`, "" for none. Entries are dropped when `config` changes (reconfigure).
  const std::string& classify(const config::PluginConfig& config, std::string_view job_name, std::string_view account,
                              std::uint32_t uid);

 private:
  static constexpr std::size_t kMaxEntries = 100000;  // names are user-chosen: bound the memory
  const config::PluginConfig* config_ = nullptr;
  std::unordered_map<std::string, std::string> classes_;
  std::string key_;
};

}  // namespace rlsched::capi
