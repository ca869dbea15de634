#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace rlsched::cli {

namespace {

constexpr double kQuietSeconds = 1.0;   // runs shorter than this never show a bar
constexpr double kRedrawSeconds = 0.1;  // limits terminal writes when the simulator reports often
constexpr int kBarWidth = 30;

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), start_(Clock::now()), last_draw_(start_), enabled_(isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (drawn_) {
    std::fputs("\r\033[K", stderr);  // erase the bar so the report starts on a clean line
    std::fflush(stderr);
  }
}

void ProgressBar::update(double share) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < kQuietSeconds) return;
  if (drawn_ && std::chrono::duration<double>(now - last_draw_).count() < kRedrawSeconds && share < 1.0) return;
  last_draw_ = now;
  drawn_ = true;
  share = std::clamp(share, 0.0, 1.0);
  const int filled = static_cast<int>(share * kBarWidth);
  const std::string eta = share > 0 ? clock_text(elapsed * (1.0 - share) / share) : std::string("?");
  fmt::print(stderr, "\r\033[K{} [{}{}] {:3.0f}%  elapsed {}  eta {}{}{}", label_, std::string(filled, '#'),
             std::string(kBarWidth - filled, '.'), share * 100.0, clock_text(elapsed), eta,
             detail_.empty() ? "" : "  ", detail_);
  std::fflush(stderr);
}

}  // namespace rlsched::cli
