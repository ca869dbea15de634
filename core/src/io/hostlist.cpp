// Slurm hostlists ("h200-[1-3,7],rack[1-2]-n[01-02]"), and slurm.conf's durations (text/duration.h's grammar).
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "io/cluster_common.h"
#include "io/line_source.h"
#include "rlsched/io/cluster_readers.h"
#include "text/duration.h"

namespace rlsched::io {

namespace {

// A typo like "n[1-100000000]" would otherwise allocate gigabytes before anything can complain.
constexpr std::size_t kMaxHosts = 1'000'000;
// Nine digits keep every product below in int64 range (days * 86400, range bounds).
constexpr std::size_t kMaxDigits = 9;

using text::all_digits;

// Expands the body of one bracket ("1-3,07,10-11") into formatted numbers; padding follows each range's start.
Status expand_bracket(std::string_view body, const std::string& hostlist, std::vector<std::string>& out) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidInput(fmt::format("hostlist '{}': {}", hostlist, why));
  };
  if (body.empty()) return bad("empty brackets '[]'");
  std::vector<std::string_view> items;
  split_into(body, ',', items);
  for (std::string_view item : items) {
    if (item.empty()) return bad(fmt::format("empty range in '[{}]'", body));
    const std::size_t dash = item.find('-');
    std::string_view lo_text = item.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
    if (!all_digits(lo_text) || !all_digits(hi_text) || lo_text.size() > kMaxDigits || hi_text.size() > kMaxDigits)
      return bad(fmt::format("'{}' is not a number or a range like 1-4", item));
    long long lo = 0, hi = 0;
    parse_int(lo_text, lo);
    parse_int(hi_text, hi);
    if (hi < lo) return bad(fmt::format("reversed range '{}'", item));
    if (static_cast<std::size_t>(hi - lo + 1) + out.size() > kMaxHosts)
      return bad(fmt::format("more than {} hosts", kMaxHosts));
    const int width = static_cast<int>(lo_text.size());
    for (long long i = lo; i <= hi; ++i) out.push_back(fmt::format("{:0{}d}", i, width));
  }
  return Status::Ok();
}

// Expands one comma-free item: literal text and bracket groups, combined as a cartesian product (first group
// outermost, so "rack[1-2]-n[1-2]" gives rack1-n1, rack1-n2, rack2-n1, rack2-n2).
Status expand_item(std::string_view item, const std::string& hostlist, std::vector<std::string>& hosts) {
  std::vector<std::vector<std::string>> groups;  // each literal is a group of one
  std::size_t i = 0;
  while (i < item.size()) {
    const std::size_t open = item.find('[', i);
    if (open != i) {
      const std::size_t end = open == std::string_view::npos ? item.size() : open;
      groups.push_back({std::string(item.substr(i, end - i))});
      i = end;
      continue;
    }
    const std::size_t close = item.find(']', open);  // balance was checked by the caller
    groups.emplace_back();
    if (Status s = expand_bracket(item.substr(open + 1, close - open - 1), hostlist, groups.back()); !s.ok()) return s;
    i = close + 1;
  }
  std::size_t total = 1;
  for (const auto& g : groups) {
    total *= g.size();  // each factor is <= kMaxHosts, so checking after every step cannot overflow
    if (total + hosts.size() > kMaxHosts)
      return Status::InvalidInput(fmt::format("hostlist '{}': more than {} hosts", hostlist, kMaxHosts));
  }
  std::vector<std::size_t> digit(groups.size(), 0);  // odometer over the groups, last group fastest
  for (std::size_t n = 0; n < total; ++n) {
    std::string host;
    for (std::size_t g = 0; g < groups.size(); ++g) host += groups[g][digit[g]];
    hosts.push_back(std::move(host));
    for (std::size_t g = groups.size(); g-- > 0;) {
      if (++digit[g] < groups[g].size()) break;
      digit[g] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(const std::string& hostlist) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidInput(fmt::format("hostlist '{}': {}", hostlist, why));
  };
  if (trim(hostlist).empty()) return bad("empty hostlist");
  std::vector<std::string> hosts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= hostlist.size(); ++i) {
    const char c = i < hostlist.size() ? hostlist[i] : ',';
    if (c == '[') {
      if (depth++ > 0) return bad(fmt::format("nested '[' at column {}", i + 1));
    } else if (c == ']') {
      if (depth-- == 0) return bad(fmt::format("unbalanced ']' at column {}", i + 1));
    } else if (c == ',' && depth == 0) {
      std::string_view item = trim(std::string_view(hostlist).substr(start, i - start));
      if (item.empty()) return bad(fmt::format("empty item at column {}", start + 1));
      if (item.find_first_of(" \t") != std::string_view::npos)
        return bad(fmt::format("'{}' contains a space (separate hosts with ',')", item));
      if (Status s = expand_item(item, hostlist, hosts); !s.ok()) return s;
      start = i + 1;
    }
    if (i == hostlist.size() && depth > 0) return bad("unbalanced '['");
  }
  return hosts;
}

Result<Seconds> parse_slurm_duration(const std::string& text) {
  auto seconds = text::parse_duration(text, {/*bare_unit=*/60, /*infinite=*/true});
  if (seconds.ok()) return seconds;
  return Status::InvalidInput(
      fmt::format("bad duration '{}': {} (expected MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, "
                  "D-HH:MM:SS or INFINITE)",
                  text, seconds.status().message()));
}

}  // namespace rlsched::io
