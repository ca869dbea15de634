#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "capi_fixtures.h"
#include "rlsched/plugin_config.h"

namespace rlsched::config {
namespace {

using rlsched::testing::PrivateDir;

TEST_CASE("an empty config gives every default", "[config]") {
  auto c = parse_plugin_config("", "rlsched.yaml");
  REQUIRE(c.ok());
  CHECK(c->mode == Mode::kShadow);  // shadow first: a new install never changes priorities by itself
  CHECK(c->model.empty());
  CHECK(c->fallback == "multifactor");
  CHECK(c->score_scale == 100000);  // the shipped example's (next test)
  CHECK(c->run_time == RunTimeView::kLimit);  // what the shipped models were trained on
  CHECK(c->reload_check_interval == 30);
  CHECK(c->placement.enabled);
  CHECK(c->placement.map_typeless);
  CHECK(c->placement.map_any_of);
  CHECK_FALSE(c->placement.retype_typed);
  CHECK(c->placement.record == RecordField::kAdminComment);
  CHECK(c->preemption.min_run_time == 600);
  CHECK(c->preemption.max_preemptions == 2);
  CHECK(c->preemption.window == 86400);
  CHECK(c->preemption.preemptable_qos.empty());
  CHECK(c->preemption.grace_margin == 30);
}

// An rlsched.yaml without score_scale serves the model at the weight it was trained and judged under: the example's.
TEST_CASE("the built-in score_scale is the shipped example's", "[config]") {
  auto example = load_plugin_config(std::string(RLSCHED_SOURCE_DIR) + "/slurm_conf_examples/rlsched.yaml", {false});
  REQUIRE(example.ok());
  auto none = parse_plugin_config("mode: enforce\n", "rlsched.yaml");
  REQUIRE(none.ok());
  CHECK(none->score_scale == example->score_scale);
  CHECK(Cluster{}.priority.site == example->score_scale);  // the simulator's weights.site
}

TEST_CASE("a full config is read key by key", "[config]") {
  const char* text = R"(mode: enforce
model: /etc/slurm/rlsched/policy.pt
fallback: wfp3
score_scale: 30000
run_time: predicted
debug: yes
reload_check_interval: 5m
accelerator_types:
  - {name: h200, gres: gpu, speed: 2.0}
  - {name: a100, gres: gpu}
  - name: 910b
    gres: npu
    speed: 0.8
gres_equivalence: [[gpu, npu]]
placement:
  enabled: true
  map_typeless: false
  map_any_of: true
  retype_typed: true
  reject_impossible: false
  partitions: [h200, a100]
  record: comment
  default_time_limit: 2h
preemption:
  min_run_time: 15m
  max_preemptions: 3
  window: 12h
  preemptable_qos: [scavenger, low]
  grace_margin: 45
)";
  auto c = parse_plugin_config(text, "rlsched.yaml");
  REQUIRE(c.ok());
  CHECK(c->mode == Mode::kEnforce);
  CHECK(c->model == "/etc/slurm/rlsched/policy.pt");
  CHECK(c->fallback == "wfp3");
  CHECK(c->score_scale == 30000);
  CHECK(c->run_time == RunTimeView::kPredicted);
  CHECK(c->debug);
  CHECK(c->reload_check_interval == 300);
  REQUIRE(c->accelerator_types.size() == 3);
  REQUIRE(c->find_type("h200", "gpu") != nullptr);
  CHECK(c->find_type("h200", "gpu")->speed == 2.0);
  REQUIRE(c->find_type("a100", "gpu") != nullptr);
  CHECK(c->find_type("a100", "gpu")->speed == 1.0);
  REQUIRE(c->find_type("910b", "npu") != nullptr);
  CHECK(c->find_type("910b", "npu")->speed == 0.8);
  CHECK(c->find_type("v100", "gpu") == nullptr);  // not configured
  CHECK(c->gres_equivalence == std::vector<std::vector<std::string>>{{"gpu", "npu"}});
  CHECK_FALSE(c->placement.map_typeless);
  CHECK(c->placement.retype_typed);
  CHECK_FALSE(c->placement.reject_impossible);
  CHECK(c->placement.partitions == std::vector<std::string>{"h200", "a100"});
  CHECK(c->placement.record == RecordField::kComment);
  CHECK(c->placement.default_time_limit == 7200);
  CHECK(c->preemption.min_run_time == 900);
  CHECK(c->preemption.max_preemptions == 3);
  CHECK(c->preemption.window == 43200);
  CHECK(c->preemption.preemptable_qos == std::vector<std::string>{"scavenger", "low"});
  CHECK(c->preemption.grace_margin == 45);
}

TEST_CASE("config errors name the line and what to do", "[config]") {
  struct Case {
    const char* text;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"mode: enforced\n", "rlsched.yaml:1: mode must be enforce or shadow (got 'enforced')"},
      {"mode: shadow\nscore_scael: 5\n", "rlsched.yaml:2: unknown key 'score_scael' (known keys: mode, model"},
      {"model: policy.pt\n", "rlsched.yaml:1: model must be an absolute path (got 'policy.pt')"},
      {"model: models/policy.pt\n", "write the full path, e.g. model: /etc/slurm/models/policy.pt"},
      {"fallback: lottery\n", "rlsched.yaml:1: fallback 'lottery' is not a scorer (known: fcfs, sjf"},
      {"score_scale: 0\n", "rlsched.yaml:1: score_scale must be in [1, 1000000000] (got 0)"},
      {"score_scale: ten\n", "rlsched.yaml:1: score_scale must be a whole number (got 'ten')"},
      {"debug: maybe\n", "rlsched.yaml:1: debug must be true or false (got 'maybe')"},
      {"mode: shadow\nrun_time: guessed\n", "rlsched.yaml:2: run_time must be limit or predicted (got 'guessed')"},
      {"reload_check_interval: soon\n", "rlsched.yaml:1: reload_check_interval must be a duration"},
      {"accelerator_types:\n  - {name: h200, gres: gpu, speed: -1}\n",
       "rlsched.yaml:2: accelerator_types[0].speed: speed must be > 0 (got -1)"},
      {"accelerator_types:\n  - {name: h200}\n", "rlsched.yaml:2: accelerator_types[0].gres is missing"},
      {"accelerator_types:\n  - {name: h200, gres: gpu, sped: 2}\n",
       "rlsched.yaml:2: unknown key 'accelerator_types[0].sped'"},
      {"accelerator_types:\n  - {name: h200, gres: gpu}\n  - {name: h200, gres: gpu}\n",
       "rlsched.yaml:3: accelerator_types[1]: type gpu:h200 is listed twice"},
      {"accelerator_types:\n  - {name: 'a|b', gres: gpu}\n", "may not contain"},
      {"gres_equivalence: [[gpu]]\n", "rlsched.yaml:1: gres_equivalence[0] must name at least two GRES names"},
      {"gres_equivalence: [[gpu, npu], [npu, fpga]]\n", "GRES 'npu' is already in an earlier group"},
      {"placement:\n  record: squeue\n",
       "rlsched.yaml:2: placement.record must be admin_comment, comment or none (got 'squeue')"},
      {"placement:\n  partitions: h200\n", "rlsched.yaml:2: placement.partitions must be a list of names"},
      {"placement:\n  map_any_of: maybe\n", "rlsched.yaml:2: placement.map_any_of must be true or false (got 'maybe')"},
      {"placement:\n  default_time_limit: 0\n", "placement.default_time_limit must be > 0"},
      {"placement:\n  mapping: yes\n", "rlsched.yaml:2: unknown key 'placement.mapping' (known keys of placement:"},
      {"accelerator_types:\n  - {name: h200, gres: gpu, count_scale: 0}\n",
       "rlsched.yaml:2: accelerator_types[0].count_scale must be > 0 and <= 1024 (got 0)"},
      // Speed tables: zero, negative and non-numeric speeds, unknown types, missing parts, each with its line.
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: llm\n    match: {job_name: 'llama*'}\n"
       "    speeds: {h200: 0}\n",
       "rlsched.yaml:5: job_classes[0].speeds.h200: speed must be > 0 (got 0)"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: llm\n    match: {job_name: 'llama*'}\n"
       "    speeds:\n      h200: -2\n",
       "rlsched.yaml:6: job_classes[0].speeds.h200: speed must be > 0 (got -2)"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: llm\n    match: {job_name: 'llama*'}\n"
       "    speeds:\n      h200: fast\n",
       "rlsched.yaml:6: job_classes[0].speeds.h200: expected a number (got 'fast')"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: llm\n    match: {job_name: 'llama*'}\n"
       "    speeds: {h200: 1, h200: 2}\n",
       "rlsched.yaml:5: job_classes[0].speeds: 'h200' is given twice"},
      {"accelerator_types: [{name: h200, gres: gpu}, {name: a100, gres: gpu}]\njob_classes:\n  - name: llm\n"
       "    match: {job_name: 'llama*'}\n    speeds:\n      h200: 2\n      h100: 1.5\n",
       "rlsched.yaml:7: job_classes[0]: unknown accelerator type 'h100' (accelerator_types lists h200, a100)"},
      {"job_classes:\n  - name: llm\n    match: {job_name: 'llama*'}\n    speeds: {h200: 2}\n",
       "rlsched.yaml:2: job_classes needs accelerator_types"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: llm\n    speeds: {h200: 2}\n",
       "rlsched.yaml:3: job_classes[0].match is missing"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: llm\n    match: {}\n"
       "    speeds: {h200: 2}\n",
       "rlsched.yaml:4: job_classes[0].match needs a non-empty job_name, account or user pattern"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: llm\n    match: {partition: x}\n"
       "    speeds: {h200: 2}\n",
       "rlsched.yaml:4: unknown key 'job_classes[0].match.partition'"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - {name: a, match: {user: u}, speeds: {h200: 2}}\n"
       "  - {name: a, match: {user: v}, speeds: {h200: 3}}\n",
       "rlsched.yaml:4: job_classes[1]: job class 'a' is listed twice"},
      {"placement:\n  slack: 0.9\n", "rlsched.yaml:2: placement.slack must be >= 1 and <= 10 (got 0.9)"},
      {"placement:\n  enabled: true\n  slack: lots\n", "rlsched.yaml:3: placement.slack"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: xpu\n    match: {job_name: 'xpu*'}\n"
       "    speeds: {h200: 2}\n    gres_portable: sometimes\n",
       "rlsched.yaml:6: job_classes[0].gres_portable must be true or false (got 'sometimes')"},
      {"accelerator_types: [{name: h200, gres: gpu}]\njob_classes:\n  - name: xpu\n    match: {job_name: 'xpu*'}\n"
       "    speeds: {h200: 2}\n    gres_portable: true\n",
       "rlsched.yaml:6: job_classes[0].gres_portable: true needs gres_equivalence"},
      {"preemption:\n  max_preemptions: -1\n", "rlsched.yaml:2: preemption.max_preemptions must be in [0, 1000]"},
      {"preemption:\n  window: 0\n", "rlsched.yaml:2: preemption.window must be > 0"},
      {"preemption:\n  min_run_time: later\n", "rlsched.yaml:2: preemption.min_run_time must be a duration"},
      {"preemption:\n  preemptable_qos: low\n", "rlsched.yaml:2: preemption.preemptable_qos must be a list"},
      {"preemption:\n  grace: 30\n", "rlsched.yaml:2: unknown key 'preemption.grace' (known keys of preemption:"},
      {"mode: [enforce\n", "rlsched.yaml:"},  // YAML syntax: yaml-cpp's own message, with a line
      {"- a\n- b\n", "rlsched.yaml:1: the file must be a mapping of keys to values"},
      {"mode: enforce\nmode: shadow\n", "rlsched.yaml:2: key 'mode' appears twice"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    auto parsed = parse_plugin_config(c.text, "rlsched.yaml");
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(parsed.status().message(), Catch::Contains(c.message));
  }
}

TEST_CASE("a relative model path is refused with the absolute path beside the config file to write", "[config]") {
  auto parsed = parse_plugin_config("model: models/policy.pt\n", "/srv/slurm/etc/rlsched.yaml");
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.status().message(),
             Catch::Contains("/srv/slurm/etc/rlsched.yaml:1: model must be an absolute path (got 'models/policy.pt')") &&
                 Catch::Contains("e.g. model: /srv/slurm/etc/models/policy.pt"));
}

TEST_CASE("job classes: first match wins, speeds per type, missing types fall back with a warning", "[config]") {
  auto c = parse_plugin_config(R"(accelerator_types:
  - {name: h200, gres: gpu, speed: 2.0}
  - {name: a100, gres: gpu, speed: 1.0}
  - {name: 910b, gres: npu, speed: 0.8, count_scale: 2}
job_classes:
  - name: llm
    match: {job_name: 'llama*', account: nlp}
    speeds: {h200: 2.6, a100: 1.0, 910b: 0.7}
  - name: vision
    match: {job_name: 'resnet*'}
    speeds: {h200: 1.4, a100: 1.0}
)",
                               "rlsched.yaml");
  REQUIRE(c.ok());
  CHECK(c->classify("llama-7b", "nlp", "alice") == "llm");
  CHECK(c->classify("llama-7b", "vision-team", "alice").empty());  // every pattern must match
  CHECK(c->classify("resnet50", "nlp", "bob") == "vision");
  CHECK(c->classify("bert", "nlp", "bob").empty());
  const AcceleratorType* h200 = c->find_type("h200", "gpu");
  const AcceleratorType* npu = c->find_type("910b", "npu");
  REQUIRE(h200);
  REQUIRE(npu);
  CHECK(h200->speed_for("llm") == 2.6);
  CHECK(h200->speed_for("vision") == 1.4);
  CHECK(h200->speed_for("") == 2.0);
  CHECK(npu->count_scale == 2.0);
  // vision gives no 910b speed: the type's default, and one warning that says where.
  CHECK(npu->speed_for("vision") == 0.8);
  REQUIRE(c->warnings.size() == 1);
  CHECK(c->warnings[0] == "rlsched.yaml:11: job class 'vision' gives no speed for 910b: the type's speed 0.8 is used");
}

TEST_CASE("the shipped example config is valid", "[config]") {
  auto c = load_plugin_config(RLSCHED_SOURCE_DIR "/slurm_conf_examples/rlsched.yaml", {/*require_private=*/false});
  REQUIRE(c.ok());
  CHECK(c->mode == Mode::kShadow);
  CHECK(c->find_type("h200", "gpu"));
  CHECK(c->find_type("910b", "npu"));
  CHECK(c->classify("llama-70b", "nlp", "alice") == "llm-pretrain");
  CHECK(c->find_type("h200", "gpu")->speed_for("embedding") == 1.1);
  CHECK(c->warnings.empty());
  // Plain GPU jobs never move to the NPUs; the one portable class may.
  const placement::Options rules = placement_options(*c);
  CHECK(rules.gres_portable_classes == std::vector<std::string>{"portable"});
  CHECK_FALSE(placement::may_change_gres(rules, ""));
  CHECK_FALSE(placement::may_change_gres(rules, "llm-pretrain"));
  CHECK(placement::may_change_gres(rules, c->classify("xpu-bert", "nlp", "alice")));
  CHECK(c->placement.slack == placement::Options::kDefaultSlack);
}

TEST_CASE("placement.slack and gres_portable are read", "[config]") {
  auto c = parse_plugin_config(
      "accelerator_types: [{name: h200, gres: gpu}, {name: 910b, gres: npu}]\ngres_equivalence: [[gpu, npu]]\n"
      "job_classes:\n  - {name: xpu, match: {job_name: 'xpu*'}, speeds: {h200: 2, 910b: 1}, gres_portable: true}\n"
      "  - {name: cuda, match: {job_name: 'cu*'}, speeds: {h200: 2, 910b: 1}}\nplacement:\n  slack: 1.5\n",
      "rlsched.yaml");
  REQUIRE(c.ok());
  CHECK(c->placement.slack == 1.5);
  REQUIRE(c->job_classes.size() == 2);
  CHECK(c->job_classes[0].gres_portable);
  CHECK_FALSE(c->job_classes[1].gres_portable);
  CHECK(placement_options(*c).slack == 1.5);
  CHECK(placement_options(*c).gres_portable_classes == std::vector<std::string>{"xpu"});
}

TEST_CASE("config and model files others could write are refused", "[config][trust]") {
  PrivateDir dir;
  const std::string good = dir.write("rlsched.yaml", "mode: enforce\n", 0644);
  CHECK(load_plugin_config(good).ok());
  CHECK(check_trusted_file(good, "config file").ok());

  const std::string world = dir.write("world.yaml", "mode: enforce\n", 0666);
  auto refused = load_plugin_config(world);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(),
             Catch::Contains("refusing config file writable by group or others (mode 0666); run chmod go-w"));
  CHECK(load_plugin_config(world, {/*require_private=*/false}).ok());

  const std::string group = dir.write("group.yaml", "mode: enforce\n", 0620);
  CHECK_FALSE(load_plugin_config(group).ok());

  auto missing = load_plugin_config(dir.file("none.yaml"));
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("none.yaml: cannot stat config file"));

  SECTION("a folder others can write is refused too") {
    REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
    auto in_open_dir = load_plugin_config(good);
    REQUIRE_FALSE(in_open_dir.ok());
    CHECK_THAT(in_open_dir.status().message(), Catch::Contains("in a folder writable by group or others"));
    REQUIRE(::chmod(dir.path().c_str(), 0700) == 0);
  }
  SECTION("a file owned by another user is refused (root only: chown)") {
    if (::geteuid() != 0) return;  // only root can give files away
    REQUIRE(::chown(good.c_str(), 65534, 65534) == 0);
    auto foreign = load_plugin_config(good);
    REQUIRE_FALSE(foreign.ok());
    CHECK_THAT(foreign.status().message(), Catch::Contains("refusing config file owned by uid 65534"));
  }
}

}  // namespace
}  // namespace rlsched::config
