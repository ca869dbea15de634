// rlsched-exporter: serves /metrics for Prometheus. A poll thread asks slurmctld (libslurm) for jobs, nodes and
// scheduler statistics every poll_interval and reads the plugins' health file; scrapes only copy what the last
// poll built. While slurmctld is down it keeps serving, with slurm_up 0, and recovers by itself.
//
//   rlsched-exporter --config /etc/slurm/rlsched-exporter.yaml
//   rlsched-exporter --config FILE --check     (parse the config and exit: 0 valid, 2 refused)
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <prometheus/exposer.h>
#include <CLI/CLI.hpp>

#include "cluster_poll.h"
#include "exporter_config.h"
#include "health_file.h"
#include "metric_families.h"
#include "slurm_poller.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop = true;
}

void log_line(const std::string& text) {
  std::fprintf(stderr, "rlsched-exporter: %s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rlsched::exporter;
  CLI::App app{"rlsched-exporter: Slurm and rlsched metrics for Prometheus"};
  std::string config_path;
  bool check = false;
  app.add_option("--config", config_path, "the exporter's YAML config (rlsched-exporter.yaml)")->required();
  app.add_flag("--check", check, "parse the config, report, and exit");
  CLI11_PARSE(app, argc, argv);

  const auto config = load_exporter_config(config_path);
  if (!config.ok()) {
    log_line(config.status().message());
    return 2;
  }
  if (check) {
    log_line(fmt::format("{}: ok (listen {}, poll every {}s)", config_path, config->listen, config->poll_interval));
    return 0;
  }

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  auto exposition = std::make_shared<Exposition>();
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(config->listen, 2);
  } catch (const std::exception& e) {
    log_line(fmt::format("{}: cannot listen on {}: {}", config_path, config->listen, e.what()));
    return 1;
  }
  exposer->RegisterCollectable(exposition);
  log_line(fmt::format("serving /metrics on {}, polling slurmctld every {}s", config->listen, config->poll_interval));

  SlurmPoller poller(config->slurm_conf);
  HealthRecords health(config->health_dir);
  StartTracker starts;
  WaitHistogram waits;
  PollHealth polls;
  Families queue;  // of the last poll that reached slurmctld
  std::string last_error;
  while (!g_stop) {
    const auto t0 = std::chrono::steady_clock::now();
    auto result = poller.poll();
    polls.last_duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++polls.polls;
    if (result.ok()) {
      if (!polls.up && polls.polls > 1) log_line("slurmctld answers again");
      polls.up = true;
      polls.last_success = result->now;
      last_error.clear();
      for (const StartedJob& job : starts.newly_started(*result)) waits.observe(job);
      queue.clear();
      append_queue_families(summarize(*result), result->cycles, queue);
    } else {
      ++polls.failures;
      polls.up = false;
      if (result.status().message() != last_error) log_line(result.status().message() + "; serving slurm_up 0");
      last_error = result.status().message();
    }
    Families all = queue;
    waits.append_to(all);
    append_poll_families(polls, all);
    health.append_to(all, [](const std::string& message) { log_line(message); });
    exposition->publish(std::move(all));

    const auto next = t0 + std::chrono::seconds(config->poll_interval);
    while (!g_stop && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  log_line("stopping");
  return 0;
}
