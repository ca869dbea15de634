// Status and Result (rlsched/status.h): value() on an error is defined, and says which error it was.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "rlsched/status.h"

namespace rlsched {
namespace {

TEST_CASE("Result::value() throws std::logic_error with the status message when there is no value", "[status]") {
  Result<int> failed = Status::InvalidInput("rlsched.yaml:3: mode must be shadow or enforce");
  REQUIRE_FALSE(failed.ok());
  CHECK_THROWS_AS(failed.value(), std::logic_error);
  CHECK_THROWS_WITH(failed.value(), Catch::Contains("rlsched.yaml:3: mode must be shadow or enforce"));
  const Result<std::string> missing = Status::NotFound("x");
  CHECK_THROWS_AS(missing.value(), std::logic_error);
  CHECK_THROWS_AS(Result<std::string>(Status::NotFound("x")).value(), std::logic_error);
}

TEST_CASE("Result::value() returns the value when there is one", "[status]") {
  Result<int> ok = 7;
  REQUIRE(ok.ok());
  CHECK(ok.value() == 7);
  CHECK(Result<std::string>(std::string("a")).value() == "a");
}

}  // namespace
}  // namespace rlsched
