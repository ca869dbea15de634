// libFuzzer target: arbitrary bytes as a sacct dump. The reader must never crash, hang or leak, and what it reports
// must add up: every data line ends used, merged or skipped; every job it returns is one a simulator can run.
// Built by the `fuzz` preset (clang, ASan + UBSan); scripts/test runs it for a bounded time (ctest label fuzz).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "invariant.h"
#include "rlsched/io/workload_readers.h"

using rlsched::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The reader takes a path (it opens plain and gzip files alike): hand it an in-memory file.
  const int fd = memfd_create("sacct", 0);
  if (fd < 0) return 0;
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) {
      close(fd);
      return 0;
    }
    done += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  for (bool strict : {false, true}) {
    rlsched::io::ReadOptions options;
    options.strict = strict;
    auto read = rlsched::io::read_sacct(path, options);
    if (!read.ok()) {
      check(!read.status().message().empty(), "an error without a message");
      continue;
    }
    const rlsched::ReadReport& r = read->report;
    check(r.records == r.used + r.merged + r.skipped, "records != used + merged + skipped");
    check(read->jobs.size() == r.used, "jobs != used");
    check(r.reasons.size() <= rlsched::ReadReport::kMaxReasons, "too many reasons kept");
    check(r.reasons.size() == std::min(r.skipped, rlsched::ReadReport::kMaxReasons), "a skip without its reason");
    check(!strict || r.skipped == 0, "strict read returned skipped records");
    for (const rlsched::Job& j : read->jobs) {
      check(j.cpus >= 1, "job with no CPU");
      check(j.run_time >= 0, "job without a run time");
      check(j.time_limit >= 0, "negative time limit");
      check(j.accel.count >= 0, "negative accelerator count");
      check(j.accel.count > 0 || j.accel.types.empty(), "accelerator types without accelerators");
      check(j.mem_mb >= 0 && j.nodes >= 0 && j.restarts >= 0, "negative memory, nodes or restarts");
    }
  }
  close(fd);
  return 0;
}
