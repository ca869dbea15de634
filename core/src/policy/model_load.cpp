// Loading and verifying a model file. Every refusal is one line that starts with the path and says why; the order of
// checks goes from the cheapest (is it a zip archive at all) to the most expensive (run the network).
#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "file_io.h"
#include "model_impl.h"
#include "rlsched/policy/model_builder.h"

namespace rlsched::policy {
namespace {

/// Lets libtorch read the archive from the bytes already in memory: they are exactly the bytes fstat identified.
class BytesReader final : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BytesReader(std::string bytes) : bytes_(std::move(bytes)) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= bytes_.size()) return 0;
    n = std::min<size_t>(n, bytes_.size() - pos);
    std::memcpy(buf, bytes_.data() + pos, n);
    return n;
  }

 private:
  std::string bytes_;
};

/// Cheap checks of the zip framing, so that "not a model at all" and "cut short" read differently from "damaged".
Status check_zip_frame(const std::string& path, const std::string& bytes) {
  if (bytes.empty()) return Status::InvalidInput(fmt::format("{}: model file is empty", path));
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "PK\x03\x04", 4) != 0)
    return Status::InvalidInput(fmt::format("{}: not a TorchScript archive (no zip header)", path));
  // The end-of-central-directory record sits in the last 22 + 65535 (comment) bytes of a complete zip file.
  const std::size_t tail = std::min<std::size_t>(bytes.size(), 22 + 65535);
  const std::string_view end(bytes.data() + bytes.size() - tail, tail);
  if (end.rfind(std::string_view("PK\x05\x06", 4)) == std::string_view::npos)
    return Status::InvalidInput(fmt::format("{}: truncated model archive (no zip end-of-archive record)", path));
  return Status::Ok();
}

Status corrupt(const std::string& path, std::string_view why) {
  return Status::InvalidInput(fmt::format("{}: corrupt TorchScript archive: {}", path, one_line(why)));
}

Result<ModelMetadata> read_metadata(const std::string& path, caffe2::serialize::PyTorchStreamReader& reader) {
  const std::string record = std::string("extra/") + kMetadataFile;
  if (!reader.hasRecord(record))
    return Status::InvalidInput(fmt::format(
        "{}: no {} in the archive: not an rlsched model file (write models with save_model)", path, kMetadataFile));
  auto [data, size] = reader.getRecord(record);
  const std::string_view text(static_cast<const char*>(data.get()), size);
  auto metadata = ModelMetadata::Parse(text);
  if (!metadata.ok())
    return Status::InvalidInput(fmt::format("{}: invalid {}: {}", path, kMetadataFile, metadata.status().message()));
  return metadata;
}

/// Notes (not refusals) for features whose normalisation text differs from this build's schema: the formula may
/// have been reworded, or changed without a schema version bump; either way an operator should hear of it.
void note_normalisation_drift(const ModelMetadata& metadata, std::vector<std::string>& notes) {
  const auto& schema = features::schema();
  for (const ModelFeature& f : metadata.features) {
    auto spec =
        std::find_if(schema.begin(), schema.end(), [&](const features::FeatureSpec& s) { return f.name == s.name; });
    if (spec != schema.end() && !f.normalisation.empty() && f.normalisation != spec->normalisation)
      notes.push_back(fmt::format("feature '{}': the model's normalisation '{}' differs from this build's '{}'", f.name,
                                  f.normalisation, spec->normalisation));
  }
}

std::string short_hex(const std::string& hex) {
  return hex.substr(0, 12) + "...";
}

Status smoke_test(const std::string& path, Model::Impl& impl) {
  const std::vector<PendingJob> jobs = smoke_jobs();
  const std::size_t width = impl.feature_map.size();
  std::vector<float> rows(jobs.size() * width);
  std::vector<float> out(jobs.size());
  impl.feature_map.extract(jobs, smoke_context(), rows.data());
  Status s = run_forward(impl.module, rows.data(), jobs.size(), width, out.data());
  if (s.code() == Status::Code::kInternal)
    return Status::InvalidInput(fmt::format("{}: forward failed on the smoke batch: {}", path, s.message()));
  if (!s.ok()) return Status::InvalidInput(fmt::format("{}: {}", path, s.message()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i]))
      return Status::InvalidInput(
          fmt::format("{}: forward returned non-finite scores on the smoke batch (row {}: {})", path, i, out[i]));
  }
  return Status::Ok();
}

}  // namespace

std::vector<PendingJob> smoke_jobs() {
  // Small and huge, short and long, fresh and old, CPU and accelerator jobs, so that a network that breaks on some
  // corner of the input space is caught before it ranks a real queue.
  std::vector<PendingJob> jobs(7);
  const Seconds waits[] = {0, 30, 600, 3600, 86400, 7 * 86400, 30 * 86400};
  const Seconds limits[] = {60, 600, 3600, 4 * 3600, 86400, 2 * 86400, 7 * 86400};
  const int cpus[] = {1, 2, 16, 128, 1024, 4, 65536};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    PendingJob& j = jobs[i];
    j.id = static_cast<JobId>(i + 1);
    j.submit = 1'000'000 - waits[i];
    j.wait = waits[i];
    j.time_limit = limits[i];
    j.cpus = cpus[i];
    j.nodes = std::max(1, cpus[i] / 64);
    j.accelerators = i % 2 == 1 ? static_cast<int>(1 << i) : 0;
    j.restarts = static_cast<int>(i % 4) * 2;
    j.checkpointable = i % 3 == 0;
    j.fits_now = i % 2 == 0;
    j.accel_speed = j.accelerators > 0 ? 0.25 * static_cast<double>(1 + i % 4) : 1.0;
    j.idle_accel_share = j.accelerators > 0 ? 0.1 * static_cast<double>(i) : 0.0;
    const double f = static_cast<double>(i) / 6.0;
    j.age_factor = f;
    j.fairshare_factor = 1.0 - f;
    j.job_size_factor = f * f;
    j.partition_factor = i % 2 ? 1.0 : 0.5;
    j.qos_factor = i == 3 ? 1.0 : 0.0;
  }
  return jobs;
}

ScoringContext smoke_context() {
  ScoringContext c;
  c.now = 1'000'000;
  c.total_cpus = 4096;
  c.idle_cpus = 512;
  c.total_nodes = 64;
  c.total_accelerators = 256;
  c.pending_jobs = 7;
  return c;
}

Result<std::shared_ptr<const Model>> load_model(const std::string& path, const LoadOptions& options) {
  auto contents = read_file(path, options.require_private, "model file");
  if (!contents.ok()) return contents.status();
  if (Status s = check_zip_frame(path, contents->bytes); !s.ok()) return s;

  auto impl = std::make_unique<Model::Impl>();
  impl->path = path;
  impl->file = contents->identity;
  auto bytes = std::make_shared<BytesReader>(std::move(contents->bytes));

  try {
    caffe2::serialize::PyTorchStreamReader reader(bytes);
    auto metadata = read_metadata(path, reader);
    if (!metadata.ok()) return metadata.status();
    impl->metadata = std::move(*metadata);
  } catch (const c10::Error& e) {
    return corrupt(path, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return corrupt(path, e.what());
  }

  const ModelMetadata& meta = impl->metadata;
  if (meta.schema_version < features::kOldestSchemaVersion || meta.schema_version > features::kSchemaVersion)
    return Status::Unsupported(
        fmt::format("{}: feature schema version {} is not supported (this build reads versions {} to {})", path,
                    meta.schema_version, features::kOldestSchemaVersion, features::kSchemaVersion));
  auto map = features::FeatureMap::For(meta.feature_names());
  if (!map.ok())
    return Status::Unsupported(
        fmt::format("{}: the model needs a feature this build cannot produce: {}", path, map.status().message()));
  impl->feature_map = std::move(*map);
  note_normalisation_drift(meta, impl->notes);

  use_one_intra_op_thread();  // before the first forward (the smoke batch), as the slurmctld fork rule requires
  torch::jit::Module module;
  try {
    module = torch::jit::load(bytes, c10::Device(c10::kCPU));
  } catch (const c10::Error& e) {
    return corrupt(path, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return corrupt(path, e.what());
  }
  if (!module.find_method("forward"))
    return Status::InvalidInput(fmt::format("{}: the module has no forward method", path));

  // Flipped bytes inside a tensor load without any complaint from libtorch: this digest is what catches them.
  std::string digest;
  try {
    digest = weights_sha256(module);
  } catch (const std::exception& e) {  // c10::Error derives from std::exception
    return corrupt(path, fmt::format("cannot read the weights: {}", e.what()));
  }
  if (digest != meta.weights_sha256)
    return Status::InvalidInput(
        fmt::format("{}: weights do not match weights_sha256 (file altered or damaged): metadata says {}, weights hash "
                    "to {}",
                    path, short_hex(meta.weights_sha256), short_hex(digest)));

  module.eval();
  try {
    impl->module = torch::jit::freeze(module);
    impl->frozen = true;
  } catch (const c10::Error& e) {
    impl->notes.push_back(fmt::format("not frozen (runs unfrozen): {}", one_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    impl->notes.push_back(fmt::format("not frozen (runs unfrozen): {}", one_line(e.what())));
  }
  if (!impl->frozen) impl->module = module;

  if (Status s = smoke_test(path, *impl); !s.ok()) return s;
  return std::shared_ptr<const Model>(std::make_shared<Model>(std::move(impl)));
}

}  // namespace rlsched::policy
