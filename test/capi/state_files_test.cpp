// The state files site_factor/rlsched and preempt/rlsched keep in slurmctld's StateSaveLocation
// (capi/run_time_history.h, capi/preemption_history.h), read back after a crash, a full disk or a hand edit: a
// damaged file must be refused whole with its name, never half read, never crash the reader; a file read whole must
// say again what it said when written. Valid files are damaged at random here (seeded: the same cases every run).
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "capi/preemption_history.h"
#include "capi/run_time_history.h"
#include "damage.h"
#include "rlsched/predicted_run_times.h"

#include <catch2/catch.hpp>

namespace rlsched {
namespace {

/// Damage with JSON's own characters.
std::string damaged(const std::string& text, std::mt19937& rng) {
  return test::damaged(text, rng, "{}[],:\"0123456789.-eE+ \ntruefalsenull");
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("a damaged run-time history is refused whole with its name, or read whole and written back the same",
          "[capi][state]") {
  RunTimePredictor written;
  for (int user = 0; user < 4; ++user)
    for (int k = 0; k < 3 + user; ++k) written.record(std::to_string(1000 + user), 600, 37 * (k + 1) + user);
  const capi::HeardJobs heard_written = {{53, 1'699'999'000}, {4'294'967'295u, 1'700'000'000}, {7, 12}};
  const std::string valid = capi::run_time_history_json(capi::run_time_history_of(written, heard_written));

  std::mt19937 rng(20261206);
  int refused = 0, read = 0;
  for (int i = 0; i < 20'000; ++i) {
    const std::string text = damaged(valid, rng);
    // What the engine knew before: a read that fails must leave it as it was.
    RunTimePredictor into;
    into.record("99", 100, 30);
    capi::HeardJobs heard = {{1, 2}};
    const Result<std::size_t> users = capi::restore_run_time_history(text, "state.json", into, heard);
    if (!users.ok()) {
      ++refused;
      CHECK(starts_with(users.status().message(), "state.json: "));
      CHECK(into.history() == std::unordered_map<std::string, std::deque<double>>{{"99", {0.3}}});
      CHECK(heard == capi::HeardJobs{{1, 2}});
      continue;
    }
    ++read;
    for (const auto& [user, values] : into.history()) {
      CHECK(values.size() <= 8);
      for (double v : values) CHECK((v >= 0 && v <= 1));
    }
    // Written back and read again: the same users, shares and heard jobs.
    const std::string again = capi::run_time_history_json(capi::run_time_history_of(into, heard));
    RunTimePredictor reread;
    capi::HeardJobs heard_again;
    REQUIRE(capi::restore_run_time_history(again, "again.json", reread, heard_again).ok());
    CHECK(reread.history() == into.history());
    CHECK(heard_again == heard);
    CHECK(capi::run_time_history_json(capi::run_time_history_of(reread, heard_again)) == again);
  }
  // The damage must have exercised both ways.
  CHECK(refused > 1000);
  CHECK(read > 100);
}

TEST_CASE("a damaged preemption history is refused whole with its name, or read whole and written back the same",
          "[capi][state]") {
  preemption::History written;
  for (JobId job : std::vector<JobId>{3, 17, 4'294'967'295})
    for (Seconds t : std::vector<Seconds>{1'700'000'000, 1'700'000'600}) written.record(job, t + job % 7);
  const std::string valid = capi::preemption_history_json(written);

  std::mt19937 rng(20261207);
  int refused = 0, read = 0;
  for (int i = 0; i < 20'000; ++i) {
    const std::string text = damaged(valid, rng);
    const Result<preemption::History> history = capi::parse_preemption_history(text, "state.json");
    if (!history.ok()) {
      ++refused;
      CHECK(starts_with(history.status().message(), "state.json: "));
      continue;
    }
    ++read;
    for (const auto& [job, times] : history->times()) CHECK((job >= 0 && job <= 4'294'967'295LL));
    const std::string again = capi::preemption_history_json(*history);
    const Result<preemption::History> reread = capi::parse_preemption_history(again, "again.json");
    REQUIRE(reread.ok());
    CHECK(capi::preemption_history_json(*reread) == again);
  }
  CHECK(refused > 1000);
  CHECK(read > 100);
}

TEST_CASE("a share written as -0 is read as 0, so that the file is written back as it was read", "[capi][state]") {
  RunTimePredictor into;
  capi::HeardJobs heard;
  REQUIRE(capi::restore_run_time_history(
              "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [-0.0]}, \"heard\": []}", "r.json", into,
              heard)
              .ok());
  CHECK(capi::run_time_history_json(capi::run_time_history_of(into, heard)) ==
        "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {\"7\": [0]}, \"heard\": []}\n");
}

TEST_CASE("a job id Slurm cannot give is refused, not wrapped to another job", "[capi][state]") {
  const Result<preemption::History> wide =
      capi::parse_preemption_history("{\"schema\": 1, \"preemptions\": [[18446744073709551615, 5]]}", "p.json");
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.status().message() == "p.json: not an rlsched preemption history: preemptions[0] is not [job_id, time]");
  RunTimePredictor into;
  capi::HeardJobs heard;
  const Result<std::size_t> users = capi::restore_run_time_history(
      "{\"schema\": 1, \"basis\": \"limit_share\", \"users\": {}, \"heard\": [[4294967296, 5]]}", "r.json", into,
      heard);
  REQUIRE_FALSE(users.ok());
  CHECK(users.status().message() == "r.json: not an rlsched run-time history: heard[0] is not [job_id, end time]");
}

}  // namespace rlsched
