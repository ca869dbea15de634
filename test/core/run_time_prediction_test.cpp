#include "rlsched/run_time_prediction.h"

#include <catch2/catch.hpp>

using namespace rlsched;

namespace {

Job job_of(const std::string& user, Seconds limit) {
  Job j;
  j.user = user;
  j.time_limit = limit;
  return j;
}

}  // namespace

TEST_CASE("run-time prediction: the mean of the user's last two run times, capped by the limit") {
  RunTimePredictor p({2, RunTimeBasis::kRunTime});
  CHECK(p.predict(job_of("ann", 3600)) == 3600);  // no history: the limit
  CHECK(p.predict(job_of("ann", 0)) == -1);       // ...or unknown
  p.record("ann", 7200, 100);
  CHECK(p.predict(job_of("ann", 3600)) == 100);
  p.record("ann", 7200, 300);
  CHECK(p.predict(job_of("ann", 3600)) == 200);
  p.record("ann", 7200, 5000);  // the oldest (100) drops out: (300 + 5000) / 2
  CHECK(p.predict(job_of("ann", 7200)) == 2650);
  CHECK(p.predict(job_of("ann", 1000)) == 1000);  // never above this job's limit
  CHECK(p.predict(job_of("ann", 0)) == 2650);     // no limit: the history alone
  CHECK(p.predict(job_of("bob", 600)) == 600);    // users do not share history
  p.record("bob", 600, 0);
  CHECK(p.predict(job_of("bob", 600)) == 1);  // at least a second
  p.record("bob", 600, -1);                   // no run time: ignored
  CHECK(p.predict(job_of("bob", 600)) == 1);
}

TEST_CASE("run-time prediction: the share of the limit used, and a longer history") {
  RunTimePredictor defaults;  // the share of the limit over the last eight
  for (int i = 0; i < 9; ++i) defaults.record("ann", 1000, i == 0 ? 1000 : 100);  // the first drops out
  CHECK(defaults.predict(job_of("ann", 500)) == 50);

  RunTimePredictor share({2, RunTimeBasis::kLimitShare});
  share.record("ann", 1000, 500);  // used half
  share.record("ann", 1000, 2000);  // ran past it: counts as all of it
  CHECK(share.predict(job_of("ann", 4000)) == 3000);  // 0.75 of this job's limit
  CHECK(share.predict(job_of("ann", 0)) == -1);
  share.record("cat", 0, 100);  // no limit to take a share of: ignored
  CHECK(share.predict(job_of("cat", 50)) == 50);

  RunTimePredictor three({3, RunTimeBasis::kRunTime});
  for (Seconds run : {10, 20, 30, 40}) three.record("ann", 0, run);
  CHECK(three.predict(job_of("ann", 0)) == 30);  // (20 + 30 + 40) / 3
}
