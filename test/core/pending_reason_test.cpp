// Slurm's pending reasons in plain words (rlsched/pending_reason.h).
#include "rlsched/pending_reason.h"

#include <catch2/catch.hpp>

using rlsched::pending_reason::explain;
using rlsched::pending_reason::limit_of;

TEST_CASE("pending_reason: limits are named from Slurm's reason text") {
  CHECK(limit_of("QOSMaxJobsPerUserLimit") == "MaxJobsPerUser");
  CHECK(limit_of("QOSGrpGRES") == "GrpGRES");
  CHECK(limit_of("AssocMaxJobsLimit") == "MaxJobs");
  CHECK(limit_of("Priority").empty());
  CHECK(limit_of("QOSNotAllowed").empty());
}

TEST_CASE("pending_reason: a QOS limit names the QOS and the limit, known reasons have plain words") {
  const auto q = explain("QOSMaxJobsPerUserLimit", "low", "lab");
  CHECK(q.what == "its QOS 'low' has reached its MaxJobsPerUser limit");
  CHECK(q.advice.find("sacctmgr show qos low") != std::string::npos);
  CHECK(explain("AssocGrpGRES", "normal", "physics").what ==
        "its association (account 'physics') has reached its GrpGRES limit");
  CHECK(explain("Priority", "", "").what == "jobs with a higher priority are ahead of it in the queue");
  CHECK(explain("JobHeldUser", "", "").advice == "scontrol release <id>");
  CHECK(explain("SomethingNew", "", "").what == "Slurm's reason 'SomethingNew'");
}

TEST_CASE("pending_reason: the forward simulation models waiting for a turn, not limits or holds") {
  using rlsched::pending_reason::forecast_models;
  CHECK(forecast_models("Priority"));
  CHECK(forecast_models("Resources"));
  CHECK(forecast_models("BeginTime"));
  CHECK(forecast_models("ReqNodeNotAvail"));
  CHECK_FALSE(forecast_models("QOSMaxJobsPerUserLimit"));
  CHECK_FALSE(forecast_models("JobHeldUser"));
  CHECK_FALSE(forecast_models("Dependency"));
}
