// libFuzzer target: arbitrary bytes as the files the engine keeps in slurmctld's StateSaveLocation (the preemption
// history, the run-time history). slurmctld reads them at start, after a crash, a full disk or a hand edit: the
// readers must never crash, hang or leak; a damaged file is refused whole, with a message naming it, and leaves
// what the engine knew untouched; an accepted one is written back as the same record (render, read, render gives
// the same text). Built by the `fuzz` preset (clang, ASan + UBSan) beside sacct_fuzz (ctest label fuzz).
#include <cstdint>
#include <string>
#include <string_view>

#include "capi/preemption_history.h"
#include "capi/run_time_history.h"
#include "invariant.h"

namespace {

using rlsched::fuzz::check;

const std::string kName = "/state/file.json";

void refused_well(const rlsched::Status& status) {
  check(status.code() == rlsched::Status::Code::kInvalidInput, "a damaged file refused as something else");
  check(status.message().rfind(kName + ": ", 0) == 0, "an error that does not name the file first");
}

void preemption_history(std::string_view text) {
  auto read = rlsched::capi::parse_preemption_history(text, kName);
  if (!read.ok()) return refused_well(read.status());
  const std::string written = rlsched::capi::preemption_history_json(*read);
  auto again = rlsched::capi::parse_preemption_history(written, kName);
  check(again.ok(), "a preemption history written back cannot be read");
  check(again->jobs() == read->jobs(), "a preemption history written back lost jobs");
  check(rlsched::capi::preemption_history_json(*again) == written, "a preemption history is not written back as read");
}

std::string rendered(const rlsched::RunTimePredictor& predictor, const rlsched::capi::HeardJobs& heard) {
  return rlsched::capi::run_time_history_json(rlsched::capi::run_time_history_of(predictor, heard));
}

void run_time_history(std::string_view text, rlsched::RunTimeBasis basis) {
  rlsched::RunTimePredictorOptions options;
  options.basis = basis;
  // What the engine knew before the file was read: a refused file must leave it as it was.
  rlsched::RunTimePredictor predictor(options);
  predictor.record("known", 3600, 1800);
  rlsched::capi::HeardJobs heard{{7, 1000}};
  const std::string before = rendered(predictor, heard);
  auto users = rlsched::capi::restore_run_time_history(text, kName, predictor, heard);
  if (!users.ok()) {
    refused_well(users.status());
    check(rendered(predictor, heard) == before, "a refused run-time history changed what the engine knew");
    return;
  }
  const std::string written = rendered(predictor, heard);
  rlsched::RunTimePredictor fresh(options);
  rlsched::capi::HeardJobs fresh_heard;
  auto again = rlsched::capi::restore_run_time_history(written, kName, fresh, fresh_heard);
  check(again.ok(), "a run-time history written back cannot be read");
  check(rendered(fresh, fresh_heard) == written, "a run-time history is not written back as read");
  for (const auto& [user, values] : fresh.history())
    check(values.size() <= static_cast<std::size_t>(options.history), "a user keeps more ended jobs than counted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  preemption_history(text);
  run_time_history(text, rlsched::RunTimeBasis::kLimitShare);
  run_time_history(text, rlsched::RunTimeBasis::kRunTime);
  return 0;
}
