#include "io/line_source.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace rlsched::io {

Result<LineSource> LineSource::Open(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // zlib reads uncompressed files transparently
  if (file == nullptr) return Status::NotFound(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  return LineSource(path, file);
}

LineSource::LineSource(LineSource&& other) noexcept
    : path_(std::move(other.path_)),
      file_(other.file_),
      buffer_(std::move(other.buffer_)),
      begin_(other.begin_),
      eof_(other.eof_),
      line_buffer_(std::move(other.line_buffer_)),
      line_(other.line_),
      error_(std::move(other.error_)) {
  other.file_ = nullptr;
}

LineSource::~LineSource() {
  if (file_ != nullptr) gzclose(file_);
}

// Reads in large blocks and splits on '\n' with memchr: NUL bytes inside a line stay in it (a binary or corrupt
// file must not merge lines and shift every later line number), and this is several times faster than gzgets.
bool LineSource::next(std::string_view& line) {
  constexpr std::size_t kBlock = 1 << 17;
  line_buffer_.clear();
  bool spans = false;
  for (;;) {
    const char* data = buffer_.data() + begin_;
    const std::size_t available = buffer_.size() - begin_;
    const void* newline = available > 0 ? std::memchr(data, '\n', available) : nullptr;
    if (newline != nullptr) {
      const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - data);
      if (spans) {
        line_buffer_.append(data, length);
        line = line_buffer_;
      } else {
        line = std::string_view(data, length);
      }
      begin_ += length + 1;
      break;
    }
    // No newline in what is buffered: keep the partial line and refill.
    if (available > 0) {
      line_buffer_.append(data, available);
      spans = true;
    }
    buffer_.clear();
    begin_ = 0;
    if (eof_) {
      if (!spans) return false;
      line = line_buffer_;  // last line without a newline
      break;
    }
    buffer_.resize(kBlock);
    const int got = gzread(file_, buffer_.data(), static_cast<unsigned>(kBlock));
    if (got < 0) {
      int code = 0;
      error_ = fmt::format("{}:{}: read error: {}", path_, line_ + 1, gzerror(file_, &code));
      buffer_.clear();
      return false;
    }
    buffer_.resize(static_cast<std::size_t>(got));
    if (got == 0) {
      int code = Z_OK;
      const char* message = gzerror(file_, &code);
      if (code != Z_OK && code != Z_STREAM_END) {  // e.g. a truncated gzip stream: Z_BUF_ERROR
        error_ = fmt::format("{}:{}: read error: {}", path_, line_ + 1, message);
        return false;
      }
      eof_ = true;
    }
  }
  ++line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
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

bool parse_int(std::string_view text, long long& value) {
  if (text.empty()) return false;
  const char* first = text.data();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out;
  for (char c : text.substr(0, kMax)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  if (text.size() > kMax) out += "...";
  return out;
}

bool parse_double(std::string_view text, double& value) {
  if (text.empty()) return false;
  const char* first = text.data();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(value);
}

}  // namespace rlsched::io
