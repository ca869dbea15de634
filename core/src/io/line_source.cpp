#include "io/line_source.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace rlsched::io {

Result<LineSource> LineSource::Open(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // zlib reads uncompressed files transparently
  if (file == nullptr) return Status::NotFound(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  gzbuffer(file, 1 << 17);
  return LineSource(path, file);
}

LineSource::LineSource(LineSource&& other) noexcept
    : path_(std::move(other.path_)),
      file_(other.file_),
      buffer_(std::move(other.buffer_)),
      line_(other.line_),
      error_(std::move(other.error_)) {
  other.file_ = nullptr;
}

LineSource::~LineSource() {
  if (file_ != nullptr) gzclose(file_);
}

bool LineSource::next(std::string_view& line) {
  buffer_.clear();
  char chunk[4096];
  for (;;) {
    if (gzgets(file_, chunk, sizeof chunk) == nullptr) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      if (code != Z_OK && code != Z_STREAM_END) {
        error_ = fmt::format("{}:{}: read error: {}", path_, line_ + 1, message);
        return false;
      }
      if (buffer_.empty()) return false;
      break;  // last line without a newline
    }
    std::size_t n = std::strlen(chunk);
    buffer_.append(chunk, n);
    if (n > 0 && chunk[n - 1] == '\n') break;
  }
  ++line_;
  std::size_t end = buffer_.size();
  while (end > 0 && (buffer_[end - 1] == '\n' || buffer_[end - 1] == '\r')) --end;
  line = std::string_view(buffer_.data(), end);
  return true;
}

std::string LineSource::where() const { return fmt::format("{}:{}", path_, line_); }

void split_whitespace(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  const std::size_t n = line.size();
  while (i < n) {
    while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == n) break;
    std::size_t start = i;
    while (i < n && line[i] != ' ' && line[i] != '\t') ++i;
    out.push_back(line.substr(start, i - start));
  }
}

void split_on(std::string_view line, char delimiter, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  for (;;) {
    std::size_t pos = line.find(delimiter, start);
    if (pos == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view trim(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && (text[b] == ' ' || text[b] == '\t')) ++b;
  while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t')) --e;
  return text.substr(b, e - b);
}

bool parse_int(std::string_view text, long long& value) {
  if (text.empty()) return false;
  const char* first = text.data();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool parse_double(std::string_view text, double& value) {
  if (text.empty()) return false;
  const char* first = text.data();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(value);
}

}  // namespace rlsched::io
