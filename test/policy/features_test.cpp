// Feature schema v2: v1's features where they were, and the two on the predicted run time (hand-worked values).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rlsched/features.h"

using namespace rlsched;

namespace {

float feature(const PendingJob& job, const std::string& name) {
  ScoringContext context;
  context.total_cpus = 64;
  context.total_nodes = 4;
  float row[features::kFeatureCount];
  features::extract_all(job, context, row);
  const std::vector<std::string> names = features::schema_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return row[k];
  FAIL("no feature " << name);
  return 0;
}

PendingJob waiting(Seconds wait, Seconds limit) {
  PendingJob job;
  job.wait = wait;
  job.time_limit = limit;
  return job;
}

}  // namespace

TEST_CASE("schema v2 keeps v1's 21 features in their columns, so v1 models read what they were trained on") {
  const std::vector<std::string> v1 = {
      "wait_log",       "limit_log",      "wait_over_limit",  "cpus_share",      "cpus_log",         "nodes_share",
      "area_log",       "size_log_limit", "accel_share",      "accel_speed",     "fits_now",         "restarts",
      "checkpointable", "age_factor",     "fairshare_factor", "job_size_factor", "partition_factor", "qos_factor",
      "queue_log",      "idle_cpu_share", "idle_accel_share"};
  const std::vector<std::string> names = features::schema_names();
  REQUIRE(names.size() == 23);
  CHECK(std::vector<std::string>(names.begin(), names.begin() + 21) == v1);
  CHECK(names[21] == "predicted_log");
  CHECK(names[22] == "wait_over_predicted");
  CHECK_FALSE(features::reads_predicted_run_time(v1));
  CHECK(features::reads_predicted_run_time({"wait_log", "wait_over_predicted"}));
  auto map = features::FeatureMap::For({"predicted_log", "limit_log"});
  REQUIRE(map.ok());
  CHECK(map->size() == 2);
}

TEST_CASE("the predicted run-time features read the prediction, or the limit where there is none") {
  // Waited 600 s, limit 3600 s, predicted 60 s: log1p(60) / log1p(604800) = 0.30879, log1p(600 / 60) / ln 101 =
  // 0.51957 (worked out by hand from the formulas in the schema).
  PendingJob job = waiting(600, 3600);
  CHECK(feature(job, "predicted_log") == Approx(feature(job, "limit_log")));
  CHECK(feature(job, "wait_over_predicted") == Approx(feature(job, "wait_over_limit")));
  CHECK(feature(job, "limit_log") == Approx(0.61513).epsilon(1e-4));
  job.predicted_run_time = 60;
  CHECK(feature(job, "predicted_log") == Approx(0.30879).epsilon(1e-4));
  CHECK(feature(job, "wait_over_predicted") == Approx(0.51957).epsilon(1e-4));
  CHECK(feature(job, "limit_log") == Approx(0.61513).epsilon(1e-4));  // the limit's own features stay
  CHECK(feature(job, "wait_over_limit") == Approx(0.03340).epsilon(1e-3));
  job.predicted_run_time = 7200;  // above the limit: the limit
  CHECK(feature(job, "predicted_log") == Approx(feature(job, "limit_log")));
}
