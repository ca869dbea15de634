// Per-class speeds learned from sacct history (rlsched/io/speed_history.h), on test/data/sacct/speeds.txt: class
// cnn ran 4-GPU jobs on h200 (900, 1000, 1100 s) and a100 (1900, 2000, 2050, 2100 s), 8-GPU jobs on both (600 and
// 1200 s); rnn ran 4-GPU jobs on h200 (1500 s) and a100 (2000 s); etl ran on a100 only; tiny has 2 h200 runs.
#include <cmath>

#include <catch2/catch.hpp>

#include "rlsched/io/speed_history.h"
#include "rlsched/io/workload_readers.h"

namespace rlsched::io {
namespace {

const std::string kDump = std::string(RLSCHED_TEST_DATA) + "/sacct/speeds.txt";

const ClassSpeeds& find(const SpeedHistory& h, const std::string& name) {
  for (const ClassSpeeds& c : h.classes)
    if (c.job_class == name) return c;
  FAIL("no class " << name);
  throw;
}

TEST_CASE("speeds compare median runs at equal accelerator counts", "[io][speeds]") {
  auto dump = read_sacct(kDump);
  REQUIRE(dump.ok());
  auto h = learn_speeds(dump->jobs, {});
  REQUIRE(h.ok());
  CHECK(h->jobs_used == 27);
  REQUIRE(h->classes.size() == 2);
  // cnn: anchor a100 (7 runs). 4 GPUs: 2025 / 1000 with 3 runs; 8 GPUs: 1200 / 600 with 3 runs.
  const ClassSpeeds& cnn = find(*h, "cnn");
  CHECK(cnn.anchor == "a100");
  const double cnn_ratio = std::sqrt(2025.0 / 1000.0 * 2.0);
  CHECK(cnn.speed.at("h200") == Approx(cnn_ratio));
  CHECK(cnn.runs.at("a100").runs == 7);
  const ClassSpeeds& rnn = find(*h, "rnn");
  CHECK(rnn.speed.at("h200") / rnn.speed.at(rnn.anchor == "h200" ? "a100" : rnn.anchor) ==
        Approx(rnn.anchor == "h200" ? 1500.0 / 2000.0 : 2000.0 / 1500.0));
  // Default speeds learned: a100 (most runs) 1.0, h200 the geometric mean of the classes' ratios.
  REQUIRE(h->types.size() == 2);
  CHECK(h->types[0].name == "a100");
  CHECK(h->types[0].speed == 1.0);
  CHECK(h->types[1].speed == Approx(std::sqrt(cnn_ratio * 2000.0 / 1500.0)));
  CHECK(h->left_out == std::vector<std::string>{"etl: ran on a100 only",
                                                "tiny: no accelerator count with 3 runs on two types"});
}

TEST_CASE("given default speeds anchor each class's speeds", "[io][speeds]") {
  auto dump = read_sacct(kDump);
  REQUIRE(dump.ok());
  const std::vector<AcceleratorType> defaults = {{"h200", "gpu", 2.0, {}}, {"a100", "gpu", 1.5, {}}};
  auto h = learn_speeds(dump->jobs, defaults, 2);
  REQUIRE(h.ok());
  const ClassSpeeds& cnn = find(*h, "cnn");
  CHECK(cnn.speed.at("a100") == 1.5);  // the anchor keeps the type's default
  CHECK(cnn.speed.at("h200") == Approx(1.5 * std::sqrt(2025.0 / 1000.0 * 2.0)));
  // With 2 runs enough, tiny counts too: 100 s on a100 against 50 s on h200.
  CHECK(find(*h, "tiny").speed.at("h200") == Approx(1.5 * 2.0));
  CHECK(h->types.size() == 2);
  CHECK_FALSE(learn_speeds({}, defaults).ok());
}

}  // namespace
}  // namespace rlsched::io
