// Slurm's pending reasons in plain words (rlsched/pending_reason.h). Texts follow Slurm's squeue(1) "JOB REASON
// CODES" and resource_limits documentation.
#include "rlsched/pending_reason.h"

#include <fmt/format.h>

namespace rlsched::pending_reason {
namespace {

struct Entry {
  std::string_view reason;
  std::string_view what;
  std::string_view advice;
};

constexpr Entry kTable[] = {
    {"Priority", "jobs with a higher priority are ahead of it in the queue",
     "wait; a shorter --time or a smaller request may let backfill start it earlier"},
    {"Resources", "it is next in line, but the resources it asks for are in use", "wait, or ask for a type or "
                                                                                  "partition that is free now"},
    {"None", "the scheduler has not looked at it yet", ""},
    {"BeginTime", "it asked not to start before its begin time (sbatch --begin, or a deferral by rlsched)",
     "scontrol update job=<id> StartTime=now, if the begin time is yours to change"},
    {"Dependency", "it waits for the jobs it depends on (sbatch --dependency)", "check them with squeue -j"},
    {"DependencyNeverSatisfied", "a job it depends on ended in a way that can never satisfy the dependency",
     "scancel it and submit again with a dependency that can be met"},
    {"JobHeldUser", "it is held by its user", "scontrol release <id>"},
    {"JobHeldAdmin", "it is held by an administrator", "ask your administrators why"},
    {"ReqNodeNotAvail", "a node it requires is down, drained or reserved",
     "drop the node list (-w) or wait until the node is back"},
    {"PartitionDown", "its partition is down", "submit to another partition, or wait until it is up"},
    {"PartitionInactive", "its partition is inactive", "submit to another partition"},
    {"PartitionNodeLimit", "it asks for more or fewer nodes than its partition allows", "change -N or the partition"},
    {"PartitionTimeLimit", "its --time is longer than its partition's MaxTime", "lower --time or change partition"},
    {"NodeDown", "a node it needs is down", "wait, or ask your administrators"},
    {"BadConstraints", "its constraints can never be met", "check --constraint, --gres and -N against the nodes"},
    {"Reservation", "it waits for its reservation to start", ""},
    {"Licenses", "the licenses it asks for are in use", "wait"},
    {"launch failed requeued held", "its launch failed and it was requeued held", "scontrol release <id>"},
    {"JobArrayTaskLimit", "its array already runs as many tasks as its % limit allows", ""},
    {"InvalidAccount", "its account is invalid", "submit with an account you belong to (sacctmgr show assoc)"},
    {"InvalidQOS", "its QOS is invalid for its account", "submit with a QOS your account may use"},
    {"Cleaning", "it is being requeued and its nodes are still cleaning up", ""},
};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

bool forecast_models(std::string_view reason) {
  // ReqNodeNotAvail: Slurm 22.05 gives it to jobs that only wait for nodes busy with or reserved for higher-priority
  // work, not just for nodes down or drained; the snapshot holds both, so the forward simulation models it.
  return reason == "Priority" || reason == "Resources" || reason == "None" || reason == "BeginTime" ||
         reason == "ReqNodeNotAvail";
}

std::string limit_of(std::string_view reason) {
  std::string_view rest;
  for (std::string_view prefix : {"QOS", "Assoc"})
    if (starts_with(reason, prefix) && (starts_with(reason.substr(prefix.size()), "Max") ||
                                        starts_with(reason.substr(prefix.size()), "Grp") ||
                                        starts_with(reason.substr(prefix.size()), "Min")))
      rest = reason.substr(prefix.size());
  if (rest.empty()) return {};
  constexpr std::string_view kLimit = "Limit";
  if (rest.size() > kLimit.size() && rest.substr(rest.size() - kLimit.size()) == kLimit)
    rest.remove_suffix(kLimit.size());
  return std::string(rest);
}

Explanation explain(std::string_view reason, std::string_view qos, std::string_view account) {
  for (const Entry& e : kTable)
    if (e.reason == reason) return {std::string(e.what), std::string(e.advice)};
  const std::string limit = limit_of(reason);
  if (!limit.empty() && starts_with(reason, "QOS"))
    return {fmt::format("its QOS '{}' has reached its {} limit", qos, limit),
            fmt::format("wait for your other jobs under QOS '{}' to end, or submit with another QOS "
                        "(sacctmgr show qos {} format=name,{})",
                        qos, qos, limit)};
  if (!limit.empty())
    return {fmt::format("its association (account '{}') has reached its {} limit", account, limit),
            fmt::format("wait for jobs of account '{}' to end, or submit under another account (sacctmgr show assoc "
                        "account={})",
                        account, account)};
  return {fmt::format("Slurm's reason '{}'", reason), "see JOB REASON CODES in squeue(1)"};
}

}  // namespace rlsched::pending_reason
