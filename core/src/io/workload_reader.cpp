// read_workload: one entry point for every trace format, chosen by file name and first line.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "io/line_source.h"
#include "rlsched/io/workload_readers.h"

namespace rlsched::io {
namespace {

constexpr std::string_view kSupported =
    "supported: SWF (*.swf, *.swf.gz, or ';' header comments), sacct --parsable2 output with its header "
    "(JobIDRaw|...), Alibaba pod list CSV (name,cpu_milli,...)";

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}


}  // namespace

Result<Workload> read_workload(const std::string& path, const ReadOptions& options) {
  if (ends_with(path, ".swf") || ends_with(path, ".swf.gz")) return read_swf(path, options);

  auto opened = LineSource::Open(path);
  if (!opened.ok()) return opened.status();
  std::string_view line, first;
  while (opened->next(line)) {
    first = trim(line);
    if (!first.empty()) break;
  }
  if (!opened->error().empty()) return Status::IoError(opened->error());
  if (first.empty()) return Status::InvalidInput(fmt::format("{}: empty file; {}", path, kSupported));

  // sacct's header names its fields in the order of --format, so JobIDRaw need not come first.
  if (first.find('|') != std::string_view::npos && first.find("JobIDRaw") != std::string_view::npos) {
    return read_sacct(path, options);
  }
  if (starts_with(first, "name,cpu_milli")) return read_alibaba_pods(path, options);
  // SWF files under other names still open with the format's ';' header comments.
  if (first.front() == ';') return read_swf(path, options);
  return Status::InvalidInput(fmt::format("{}:{}: unknown workload format (first line '{}'); {}", path,
                                          opened->line_number(), excerpt(first), kSupported));
}

}  // namespace rlsched::io
