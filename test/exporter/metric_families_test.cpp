#include <catch2/catch.hpp>

#include <prometheus/text_serializer.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "health_file.h"
#include "metric_families.h"

using namespace rlsched::exporter;

namespace {

std::string text_of(const Families& families) {
  return prometheus::TextSerializer().Serialize(families);
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("the wait histogram puts each wait in its bucket, cumulative as Prometheus reads it") {
  WaitHistogram h;
  h.observe({"h200", "normal", "h200", 0});
  h.observe({"h200", "normal", "h200", 61});         // above 60 s, within 2 min
  h.observe({"h200", "normal", "h200", 3 * 86400});  // three days: within the 4-day bucket
  h.observe({"a100", "normal", "any", 5});
  Families f;
  h.append_to(f);
  const std::string t = text_of(f);
  INFO(t);
  const std::string h200 = R"(partition="h200",qos="normal",accelerator_type="h200")";
  CHECK(has_line(t, "slurm_job_wait_seconds_count{" + h200 + "} 3"));
  CHECK(has_line(t, "slurm_job_wait_seconds_bucket{" + h200 + ",le=\"1\"} 1"));
  CHECK(has_line(t, "slurm_job_wait_seconds_bucket{" + h200 + ",le=\"60\"} 1"));
  CHECK(has_line(t, "slurm_job_wait_seconds_bucket{" + h200 + ",le=\"120\"} 2"));
  CHECK(has_line(t, "slurm_job_wait_seconds_bucket{" + h200 + ",le=\"172800\"} 2"));
  CHECK(has_line(t, "slurm_job_wait_seconds_bucket{" + h200 + ",le=\"345600\"} 3"));
  CHECK(has_line(t, "slurm_job_wait_seconds_bucket{" + h200 + ",le=\"+Inf\"} 3"));
  CHECK(has_line(t, "slurm_job_wait_seconds_sum{" + h200 + "} 259261"));
  CHECK(has_line(t, R"(slurm_job_wait_seconds_count{partition="a100",qos="normal",accelerator_type="any"} 1)"));
}

TEST_CASE("slurm_up and the poll counters say whether slurmctld answered") {
  PollHealth down;
  down.up = false;
  down.polls = 5;
  down.failures = 2;
  Families f;
  append_poll_families(down, f);
  const std::string t = text_of(f);
  INFO(t);
  CHECK(has_line(t, "slurm_up 0"));
  CHECK(has_line(t, R"(slurm_exporter_polls_total{result="ok"} 3)"));
  CHECK(has_line(t, R"(slurm_exporter_polls_total{result="failed"} 2)"));
}

TEST_CASE("the plugins' health record becomes rlsched_ metrics") {
  const std::string record = R"({"schema": 1, "written_at": 1000,
    "model": {"sha256": "ab12", "path": "/etc/slurm/m.pt", "loaded_at": 900, "fallback_active": true},
    "fallbacks": {"model_load_failed": 2}, "faults": {"nonfinite_scores": 1},
    "preemptions": 4, "grace_seconds": 120, "lost_accelerator_hours": 1.5,
    "energy": {"deferred": 3, "would_defer": 0, "sunk": 11},
    "placements": [{"accelerator_type": "h200", "reason": "earliest_completion", "count": 7}],
    "site_factor_update_seconds": {"bounds": [0.001, 0.005], "counts": [3, 1, 1], "sum": 0.02},
    "rank_disagreement": {"share": 0.25, "pairs": 12, "jobs": 6, "mode": "shadow"}})";
  Families f;
  append_health_families(record, "h.json", 1030, f);
  const std::string t = text_of(f);
  INFO(t);
  CHECK(has_line(t, "rlsched_health_file_age_seconds 30"));
  CHECK(has_line(t, R"(rlsched_model_info{sha256="ab12",path="/etc/slurm/m.pt"} 1)"));
  CHECK(has_line(t, "rlsched_model_fallback_active 1"));
  CHECK(has_line(t, R"(rlsched_fallbacks_total{kind="model_load_failed"} 2)"));
  CHECK(has_line(t, R"(rlsched_faults_total{kind="nonfinite_scores"} 1)"));
  CHECK(has_line(t, "rlsched_preemptions_total 4"));
  CHECK(has_line(t, R"(rlsched_energy_decisions_total{kind="deferred"} 3)"));
  CHECK(has_line(t, R"(rlsched_energy_decisions_total{kind="sunk"} 11)"));
  CHECK(has_line(t, "rlsched_preemption_grace_seconds_total 120"));
  CHECK(has_line(t, "rlsched_lost_accelerator_hours_total 1.5"));
  CHECK(has_line(t, R"(rlsched_placements_total{accelerator_type="h200",reason="earliest_completion"} 7)"));
  CHECK(has_line(t, R"(rlsched_site_factor_update_duration_seconds_bucket{le="0.005"} 4)"));
  CHECK(has_line(t, "rlsched_site_factor_update_duration_seconds_count 5"));
  CHECK(has_line(t, R"(rlsched_rank_disagreement_ratio{mode="shadow"} 0.25)"));
  CHECK(has_line(t, R"(rlsched_rank_disagreement_jobs{mode="shadow"} 6)"));

  Families bad;
  CHECK_THROWS_WITH(append_health_families("{\"schema\": 2}", "h.json", 0, bad),
                    Catch::Contains("h.json: not an rlsched health record"));
  CHECK_THROWS_WITH(append_health_families("{\"schema\": 1, \"site_factor_update_seconds\": {\"bounds\": [1], "
                                           "\"counts\": [1]}}",
                                           "h.json", 0, bad),
                    Catch::Contains("one count per bound"));
}

TEST_CASE("every record in health_dir is served under its plugin label, and a broken one says so") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("exporter_health_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "site_factor.json") << R"({"schema": 1, "preemptions": 0, "model": {"fallback_active": false}})";
  std::ofstream(dir / "preempt.json") << R"({"schema": 1, "preemptions": 5})";
  std::ofstream(dir / "job_submit.json") << "{not json";
  std::ofstream(dir / ".preempt.json.tmp") << "{}";  // a writer's temporary file: not a record
  Families f;
  std::vector<std::string> logged;
  HealthRecords(dir.string()).append_to(f, [&](const std::string& line) { logged.push_back(line); });
  // A number past a double's range is not a syntax error to nlohmann, but the record is as unreadable: named too.
  std::ofstream(dir / "job_submit.json") << R"({"schema": 1, "placements": 1e999})";
  Families overflow;
  std::vector<std::string> overflow_logged;
  HealthRecords(dir.string()).append_to(overflow, [&](const std::string& line) { overflow_logged.push_back(line); });
  REQUIRE(overflow_logged.size() == 1);
  CHECK(overflow_logged[0].find("job_submit.json: not JSON: ") != std::string::npos);
  CHECK(overflow_logged[0].find("number overflow") != std::string::npos);
  std::filesystem::remove_all(dir);
  const std::string t = text_of(f);
  INFO(t);
  CHECK(has_line(t, R"(rlsched_health_file_ok{plugin="job_submit"} 0)"));
  CHECK(has_line(t, R"(rlsched_health_file_ok{plugin="preempt"} 1)"));
  CHECK(has_line(t, R"(rlsched_health_file_ok{plugin="site_factor"} 1)"));
  CHECK(has_line(t, R"(rlsched_preemptions_total{plugin="preempt"} 5)"));
  CHECK(has_line(t, R"(rlsched_model_fallback_active{plugin="site_factor"} 0)"));
  // One HELP line per family, however many plugins contribute series to it.
  std::size_t helps = 0;
  for (std::size_t at = 0; (at = t.find("# HELP rlsched_preemptions_total ", at)) != std::string::npos; ++at) ++helps;
  CHECK(helps == 1);
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].find("job_submit.json: not JSON") != std::string::npos);
}
