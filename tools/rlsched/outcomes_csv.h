// Per-job outcomes (`simulate --outcomes`) and the scheduler's events (`simulate --events`) as CSV, for analysis
// outside rlsched.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "rlsched/cluster.h"
#include "rlsched/job.h"
#include "rlsched/sim/energy.h"
#include "rlsched/sim/outcome.h"
#include "rlsched/sim/simulator.h"
#include "rlsched/status.h"

namespace rlsched::cli {

/// Writes a header and one row per outcome: id, user, submit, start, end, wait, run, state, partition,
/// accelerator_type, cpus, accelerators, restarts, nodes, and with `energy` kwh, cost, co2_g (the job's own energy
/// over all its runs). Times are the trace's seconds; start/end/wait/run are empty for a job that never started (end
/// and run also for one still running). `jobs` is what outcome.job indexes.
/// \return IoError naming the file when it cannot be written.
Status write_outcomes_csv(const std::string& path, const std::vector<Job>& jobs,
                          const std::vector<sim::JobOutcome>& outcomes, const Cluster& cluster,
                          const sim::EnergyReport* energy = nullptr);

/// One row per scheduler event as the simulation reports it: time, event (start, backfill_start, reservation, end,
/// requeue, placement, preempt), id, partition, accelerator_type, expected_start (reservations), nodes.
class EventLog {
 public:
  /// \return IoError naming the file when it cannot be created.
  Status open(const std::string& path, const std::vector<Job>& jobs, const Cluster& cluster);
  void write(const sim::ScheduleEvent& e);
  /// \return IoError naming the file when a write failed.
  Status close();

 private:
  std::string path_;
  std::ofstream file_;
  const std::vector<Job>* jobs_ = nullptr;
  const Cluster* cluster_ = nullptr;
};

}  // namespace rlsched::cli
