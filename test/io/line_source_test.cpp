#include "io/line_source.h"

#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

using rlsched::io::LineSource;

namespace {
std::string temp_path(const char* name) { return std::string(P_tmpdir) + "/rlsched_test_" + name; }
}  // namespace

TEST_CASE("LineSource reads plain and gzip files with line numbers") {
  const std::string plain = temp_path("plain.txt");
  const std::string gz = temp_path("text.gz");
  const std::string text = "first\r\nsecond\n\nlast without newline";
  { std::ofstream(plain) << text; }
  {
    gzFile f = gzopen(gz.c_str(), "wb");
    REQUIRE(f != nullptr);
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  }
  for (const auto& path : {plain, gz}) {
    auto source = LineSource::Open(path);
    REQUIRE(source.ok());
    std::string_view line;
    REQUIRE(source->next(line));
    CHECK(line == "first");
    REQUIRE(source->next(line));
    CHECK(line == "second");
    REQUIRE(source->next(line));
    CHECK(line.empty());
    REQUIRE(source->next(line));
    CHECK(line == "last without newline");
    CHECK(source->where() == path + ":4");
    CHECK_FALSE(source->next(line));
    CHECK(source->error().empty());
  }
  std::remove(plain.c_str());
  std::remove(gz.c_str());
}

TEST_CASE("LineSource reports a missing file by name") {
  auto source = LineSource::Open("/nonexistent/trace.swf");
  REQUIRE_FALSE(source.ok());
  CHECK(source.status().message().find("/nonexistent/trace.swf") != std::string::npos);
}

TEST_CASE("field splitting and number parsing") {
  std::vector<std::string_view> fields;
  rlsched::io::split_whitespace("  1 \t 2   -1\t", fields);
  REQUIRE(fields.size() == 3);
  CHECK(fields[2] == "-1");
  rlsched::io::split_into("a||c|", '|', fields);
  REQUIRE(fields.size() == 4);
  CHECK(fields[1].empty());
  CHECK(fields[3].empty());
  long long v = 0;
  CHECK(rlsched::io::parse_int("-42", v));
  CHECK(v == -42);
  CHECK_FALSE(rlsched::io::parse_int("4x", v));
  CHECK_FALSE(rlsched::io::parse_int("", v));
  double d = 0;
  CHECK(rlsched::io::parse_double("1.5", d));
  CHECK(d == 1.5);
  CHECK_FALSE(rlsched::io::parse_double("nan", d));
}

TEST_CASE("LineSource keeps NUL bytes inside their line, so later line numbers stay right") {
  const std::string path = temp_path("nul.txt");
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string("a\0b\nsecond\n", 11);
  }
  auto source = LineSource::Open(path);
  REQUIRE(source.ok());
  std::string_view line;
  REQUIRE(source->next(line));
  CHECK(line == std::string_view("a\0b", 3));
  REQUIRE(source->next(line));
  CHECK(line == "second");
  CHECK(source->line_number() == 2);
  std::remove(path.c_str());
}

TEST_CASE("LineSource joins a line that spans read blocks") {
  const std::string path = temp_path("long.txt");
  const std::string longline(300000, 'x');
  { std::ofstream(path) << "short\n" << longline << "\nend"; }
  auto source = LineSource::Open(path);
  REQUIRE(source.ok());
  std::string_view line;
  REQUIRE(source->next(line));
  REQUIRE(source->next(line));
  CHECK(line.size() == longline.size());
  REQUIRE(source->next(line));
  CHECK(line == "end");
  CHECK_FALSE(source->next(line));
}
