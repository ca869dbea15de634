#include "policy_fixtures.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "rlsched/features.h"
#include "rlsched/policy/model_builder.h"

namespace rlsched::policy::testing {
namespace {

torch::Tensor tensor_of(const std::vector<float>& values, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(values.data()), shape, torch::kFloat32).clone();
}

MlpSpec spec_of(const PlainMlp& mlp) {
  MlpSpec spec;
  spec.features = mlp.features;
  const auto width = static_cast<std::int64_t>(mlp.features.size());
  spec.input_mean = tensor_of(mlp.mean, {width});
  spec.input_std = tensor_of(mlp.std, {width});
  for (const PlainMlp::Layer& l : mlp.layers)
    spec.layers.push_back({tensor_of(l.weight, {l.out, l.in}), tensor_of(l.bias, {l.out})});
  return spec;
}

torch::jit::Module built(const PlainMlp& mlp) {
  auto module = build_mlp_module(spec_of(mlp));
  REQUIRE(module.ok());
  return *module;
}

/// A hand-written TorchScript module with the given float32 parameters.
torch::jit::Module raw_module(const std::string& source,
                              const std::vector<std::pair<std::string, torch::Tensor>>& params) {
  torch::jit::Module module("rlsched_test_module");
  for (const auto& [name, value] : params) module.register_parameter(name, value, /*is_buffer=*/false);
  module.define(source);
  return module;
}

/// Saves without save_model's verification, with metadata whose digest matches, so that only the defect under test
/// is wrong.
void save_unverified(const std::string& path, torch::jit::Module& module, ModelMetadata metadata) {
  metadata.weights_sha256 = weights_sha256(module);
  metadata.created = "2025-01-01T00:00:00Z";
  module.save(path, {{kMetadataFile, metadata.to_json().dump()}});
}

ModelMetadata canonical_metadata() {
  return ModelMetadata::ForFeatures(features::schema_names(), "test");
}

std::size_t find_unique(const std::string& haystack, const std::string& needle) {
  const std::size_t at = haystack.find(needle);
  REQUIRE(at != std::string::npos);
  REQUIRE(haystack.find(needle, at + 1) == std::string::npos);
  return at;
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/rlsched_policy_XXXXXX";
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

PlainMlp PlainMlp::Random(std::vector<std::string> features, const std::vector<int>& hidden, std::uint64_t seed) {
  PlainMlp mlp;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int width = static_cast<int>(features.size());
  mlp.features = std::move(features);
  for (int k = 0; k < width; ++k) {
    mlp.mean.push_back(0.5f * unit(rng));
    mlp.std.push_back(0.5f + unit(rng));
  }
  std::vector<int> sizes{width};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(1);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    Layer layer;
    layer.in = sizes[i];
    layer.out = sizes[i + 1];
    const float bound = 1.0f / std::sqrt(static_cast<float>(layer.in));
    std::uniform_real_distribution<float> dist(-bound, bound);
    for (int k = 0; k < layer.in * layer.out; ++k) layer.weight.push_back(dist(rng));
    for (int k = 0; k < layer.out; ++k) layer.bias.push_back(dist(rng));
    mlp.layers.push_back(std::move(layer));
  }
  return mlp;
}

PlainMlp PlainMlp::Dyadic() {
  PlainMlp mlp;
  mlp.features = {"qos_factor", "age_factor", "fits_now", "fairshare_factor", "checkpointable", "partition_factor"};
  mlp.mean = {0.5f, 0.25f, 0.0f, 0.5f, 0.0f, 0.5f};
  mlp.std = {2.0f, 0.5f, 1.0f, 0.25f, 1.0f, 4.0f};
  mlp.layers.push_back({6,
                        4,
                        {1,    -0.5f, 2,    0,    0.25f, -1,  //
                         -2,   1,     0,    0.5f, -1,    0,   //
                         0,    0,     -1,   -1,   0,     2,   //
                         0.5f, 0.5f,  0.5f, 0.5f, 0.5f,  0.5f},
                        {0.5f, -0.25f, -4, 0}});
  mlp.layers.push_back({4, 2, {1, -1, 0.5f, 2, -0.5f, 2, 1, -1}, {0.125f, -1}});
  mlp.layers.push_back({2, 1, {1.5f, -0.75f}, {0.0625f}});
  return mlp;
}

std::vector<PendingJob> dyadic_jobs() {
  std::vector<PendingJob> jobs;
  const double qos[] = {0, 1, 0.5};
  const double age[] = {0, 0.25, 0.5, 0.75, 1};
  const double fairshare[] = {0.125, 0.375, 0.875, 1};
  const double partition[] = {0.5, 1};
  for (int i = 0; i < 24; ++i) {
    PendingJob j;
    j.id = i + 1;
    j.submit = 1000 + i;
    j.wait = 37 * i;
    j.time_limit = 600 + 60 * i;
    j.cpus = 1 + i;
    j.qos_factor = qos[i % 3];
    j.age_factor = age[i % 5];
    j.fits_now = i % 2 == 0;
    j.fairshare_factor = fairshare[(i / 2) % 4];
    j.checkpointable = i % 7 < 3;
    j.partition_factor = partition[(i / 3) % 2];
    jobs.push_back(j);
  }
  return jobs;
}

std::vector<double> reference_scores(const PlainMlp& mlp, const std::vector<PendingJob>& jobs,
                                     const ScoringContext& context) {
  auto map = features::FeatureMap::For(mlp.features);
  REQUIRE(map.ok());
  const std::size_t width = map->size();
  std::vector<float> rows(jobs.size() * width);
  map->extract(jobs, context, rows.data());
  std::vector<double> scores;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::vector<double> h(width);
    for (std::size_t k = 0; k < width; ++k)
      h[k] = (static_cast<double>(rows[i * width + k]) - mlp.mean[k]) / static_cast<double>(mlp.std[k]);
    for (std::size_t l = 0; l < mlp.layers.size(); ++l) {
      const PlainMlp::Layer& layer = mlp.layers[l];
      std::vector<double> next(static_cast<std::size_t>(layer.out));
      for (int o = 0; o < layer.out; ++o) {
        double sum = layer.bias[o];
        for (int k = 0; k < layer.in; ++k) sum += static_cast<double>(layer.weight[o * layer.in + k]) * h[k];
        next[o] = l + 1 < mlp.layers.size() ? std::max(0.0, sum) : sum;
      }
      h = std::move(next);
    }
    scores.push_back(h[0]);
  }
  return scores;
}

std::vector<PendingJob> random_jobs(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<PendingJob> jobs(n);
  for (std::size_t i = 0; i < n; ++i) {
    PendingJob& j = jobs[i];
    j.id = static_cast<JobId>(i + 1);
    j.wait = static_cast<Seconds>(std::pow(10.0, 5.5 * unit(rng)));
    j.submit = 2'000'000 - j.wait;
    j.time_limit = 60 + static_cast<Seconds>(std::pow(10.0, 5.7 * unit(rng)));
    j.cpus = 1 << static_cast<int>(10 * unit(rng));
    j.nodes = std::max(1, j.cpus / 32);
    j.accelerators = unit(rng) < 0.4 ? 1 << static_cast<int>(4 * unit(rng)) : 0;
    j.restarts = static_cast<int>(3 * unit(rng));
    j.checkpointable = unit(rng) < 0.5;
    j.fits_now = unit(rng) < 0.3;
    j.accel_speed = j.accelerators > 0 ? 0.25 + 0.75 * unit(rng) : 1.0;
    j.idle_accel_share = j.accelerators > 0 ? unit(rng) : 0.0;
    j.age_factor = unit(rng);
    j.fairshare_factor = unit(rng);
    j.job_size_factor = unit(rng);
    j.partition_factor = unit(rng) < 0.5 ? 1.0 : 0.5;
    j.qos_factor = unit(rng) < 0.2 ? 1.0 : 0.0;
  }
  return jobs;
}

ScoringContext test_context(int pending_jobs) {
  ScoringContext c;
  c.now = 2'000'000;
  c.total_cpus = 8192;
  c.idle_cpus = 1024;
  c.total_nodes = 256;
  c.total_accelerators = 512;
  c.pending_jobs = pending_jobs;
  return c;
}

void write_model(const std::string& path, const PlainMlp& mlp) {
  auto spec = spec_of(mlp);
  auto module = build_mlp_module(spec);
  REQUIRE(module.ok());
  Status saved = save_model(path, *module, ModelMetadata::ForFeatures(mlp.features, spec.architecture()));
  INFO(saved.message());
  REQUIRE(saved.ok());
}

void write_bad_model(const std::string& path, BadModel kind) {
  const auto names = features::schema_names();
  const auto width = static_cast<std::int64_t>(names.size());
  PlainMlp mlp = PlainMlp::Random(names, {8}, 7);
  mlp.layers[0].weight[0] = 1234.5f;  // a value to find in the archive's bytes
  torch::jit::Module good = built(mlp);
  const auto good_bytes = [&] {
    const std::string tmp = path + ".good";
    save_unverified(tmp, good, canonical_metadata());
    std::string bytes = read_bytes(tmp);
    std::remove(tmp.c_str());
    return bytes;
  };

  switch (kind) {
    case BadModel::kEmpty:
      return write_bytes(path, "");
    case BadModel::kNotZip:
      return write_bytes(path, "#!/bin/sh\necho this is not a model\n");
    case BadModel::kCorruptDirectory: {
      std::string bytes = good_bytes();
      const std::size_t entry = bytes.find(std::string("PK\x01\x02", 4));  // first central directory entry
      REQUIRE(entry != std::string::npos);
      for (std::size_t k = entry; k < entry + 4; ++k) bytes[k] = static_cast<char>(~bytes[k]);
      return write_bytes(path, bytes);
    }
    case BadModel::kCorruptPickle: {
      std::string bytes = good_bytes();
      const std::size_t name = bytes.find("/data.pkl");  // its local header comes first
      REQUIRE(name != std::string::npos);
      const std::size_t pickle = bytes.find("\x80\x02", name);  // pickle protocol 2 opcode starts the record
      REQUIRE(pickle != std::string::npos);
      for (std::size_t k = pickle; k < pickle + 8; ++k) bytes[k] = static_cast<char>(bytes[k] ^ 0x5a);
      return write_bytes(path, bytes);
    }
    case BadModel::kTruncated: {
      const std::string bytes = good_bytes();
      return write_bytes(path, bytes.substr(0, bytes.size() * 2 / 3));
    }
    case BadModel::kNoMetadata:
      return good.save(path);
    case BadModel::kInvalidJson:
      return good.save(path, {{kMetadataFile, "{\"schema_version\": 1, \"features\": ["}});
    case BadModel::kWrongSchema: {
      ModelMetadata meta = canonical_metadata();
      meta.schema_version = features::kSchemaVersion + 1;
      return save_unverified(path, good, meta);
    }
    case BadModel::kUnknownFeature: {
      ModelMetadata meta = canonical_metadata();
      meta.features[3].name = "gpu_temperature";
      return save_unverified(path, good, meta);
    }
    case BadModel::kWeightBytesFlipped: {
      std::string bytes = good_bytes();
      float marker = 1234.5f;
      std::string needle(sizeof marker, '\0');
      std::memcpy(needle.data(), &marker, sizeof marker);
      const std::size_t at = find_unique(bytes, needle);
      bytes[at] = static_cast<char>(bytes[at] ^ 0x01);  // 1234.5 -> 1234.5001: finite, plausible, wrong
      return write_bytes(path, bytes);
    }
    case BadModel::kOutputN1:
    case BadModel::kOutputN2:
    case BadModel::kOutputFloat64: {
      const std::int64_t out = kind == BadModel::kOutputN2 ? 2 : 1;
      const char* tail = kind == BadModel::kOutputFloat64 ? ".squeeze(1).double()" : "";
      auto module = raw_module(
          std::string("def forward(self, x: Tensor) -> Tensor:\n    return torch.mm(x, self.w)") + tail + "\n",
          {{"w", torch::ones({width, out})}});
      return save_unverified(path, module, canonical_metadata());
    }
    case BadModel::kNaNWeight: {
      torch::NoGradGuard no_grad;
      good.attr("fc1_weight").toTensor()[0][3] = std::numeric_limits<float>::quiet_NaN();
      return save_unverified(path, good, canonical_metadata());
    }
    case BadModel::kForwardThrows: {
      // A weight one row too long: the shape error surfaces only when forward runs (as std::runtime_error).
      auto module = raw_module("def forward(self, x: Tensor) -> Tensor:\n    return torch.mm(x, self.w).squeeze(1)\n",
                               {{"w", torch::ones({width + 1, 1})}});
      return save_unverified(path, module, canonical_metadata());
    }
  }
  FAIL("unhandled BadModel");
}

void write_scripted_model(const std::string& path, const std::string& forward_source) {
  const auto width = static_cast<std::int64_t>(features::kFeatureCount);
  auto module = raw_module(forward_source, {{"w", torch::full({width, 1}, 1.0f / static_cast<float>(width))}});
  save_unverified(path, module, canonical_metadata());
}

bool libtorch_loads(const std::string& path) {
  try {
    (void)torch::jit::load(path);
    return true;
  } catch (const std::exception&) {  // c10::Error derives from std::exception
    return false;
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

void replace_file(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".replacing";
  write_bytes(tmp, bytes);
  REQUIRE(std::rename(tmp.c_str(), path.c_str()) == 0);
}

}  // namespace rlsched::policy::testing
