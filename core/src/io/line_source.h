// Line-by-line reading of plain or gzip-compressed text files, with 1-based line numbers for error messages.
#pragma once

#include <zlib.h>

#include <string>
#include <string_view>
#include <vector>

#include "rlsched/status.h"
#include "text/text.h"

namespace rlsched::io {

class LineSource {
 public:
  /// Opens `path`; gzip content is detected by its magic bytes, so "x.swf" and "x.swf.gz" both work.
  static Result<LineSource> Open(const std::string& path);

  LineSource(LineSource&& other) noexcept;
  LineSource& operator=(LineSource&&) = delete;
  LineSource(const LineSource&) = delete;
  ~LineSource();

  /// Reads the next line without its end-of-line characters ("\n", "\r\n").
  /// \return false at end of file or on a read error (see error()).
  bool next(std::string_view& line);
  /// \return "path:line" of the line last returned, for messages.
  std::string where() const;
  int line_number() const { return line_; }
  const std::string& path() const { return path_; }
  /// \return a non-empty message when reading stopped on an error rather than at end of file.
  const std::string& error() const { return error_; }

 private:
  LineSource(std::string path, gzFile file) : path_(std::move(path)), file_(file) {}
  std::string path_;
  gzFile file_ = nullptr;
  std::string buffer_;      // decompressed bytes not yet returned: [begin_, buffer_.size())
  std::size_t begin_ = 0;
  bool eof_ = false;
  std::string line_buffer_;  // a line that spans two buffer refills
  int line_ = 0;
  std::string error_;
};

/// Splits on runs of spaces and tabs (SWF) into `out` (cleared first).
void split_whitespace(std::string_view line, std::vector<std::string_view>& out);
using text::split_into;  // on a single-character delimiter, keeping empty fields (sacct '|', CSV ',')
using text::trim;
/// Parses a whole field as a base-10 integer. \return false if empty, not a number, or out of range.
bool parse_int(std::string_view text, long long& value);
/// Parses a whole field as a floating-point number (finite values only).
bool parse_double(std::string_view text, double& value);
/// A field as an error message shows it: at most 40 characters, non-printable ones as '?', since a broken record
/// may hold anything.
std::string excerpt(std::string_view text);

}  // namespace rlsched::io
