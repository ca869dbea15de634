// Building MLP policy networks in C++ alone, the weights digest, and writing model files atomically.
#include "rlsched/policy/model_builder.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "file_io.h"
#include "model_impl.h"
#include "rlsched/features.h"
#include "rlsched/policy/model.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "weights_sha256 hashes tensor bytes as stored in memory");

namespace rlsched::policy {
namespace {

std::string shape_text(const torch::Tensor& t) {
  return fmt::format("[{}]", fmt::join(t.sizes(), ", "));
}

Status check_tensor(const torch::Tensor& t, const std::string& what, std::vector<std::int64_t> shape) {
  if (!t.defined()) return Status::InvalidInput(fmt::format("{} is not set", what));
  if (t.scalar_type() != torch::kFloat32)
    return Status::InvalidInput(fmt::format("{} must be float32 (got {})", what, dtype_name(t.scalar_type())));
  if (t.sizes() != c10::IntArrayRef(shape))
    return Status::InvalidInput(
        fmt::format("{} must have shape [{}] (got {})", what, fmt::join(shape, ", "), shape_text(t)));
  if (!torch::isfinite(t).all().item<bool>())
    return Status::InvalidInput(fmt::format("{} has non-finite values", what));
  return Status::Ok();
}

Status check_spec(const MlpSpec& spec) {
  const auto width = static_cast<std::int64_t>(spec.features.size());
  if (width == 0) return Status::InvalidInput("MlpSpec.features is empty");
  if (Status s = check_tensor(spec.input_mean, "MlpSpec.input_mean", {width}); !s.ok()) return s;
  if (Status s = check_tensor(spec.input_std, "MlpSpec.input_std", {width}); !s.ok()) return s;
  if (!(spec.input_std > 0).all().item<bool>()) return Status::InvalidInput("MlpSpec.input_std must be > 0 everywhere");
  if (spec.layers.empty()) return Status::InvalidInput("MlpSpec.layers is empty");
  std::int64_t in = width;
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const MlpLayer& layer = spec.layers[i];
    const std::string name = fmt::format("MlpSpec.layers[{}]", i);
    if (!layer.weight.defined() || layer.weight.dim() != 2 || layer.weight.size(1) != in)
      return Status::InvalidInput(fmt::format("{}.weight must have shape [out, {}] (got {})", name, in,
                                              layer.weight.defined() ? shape_text(layer.weight) : "nothing"));
    const std::int64_t out = layer.weight.size(0);
    if (i + 1 == spec.layers.size() && out != 1)
      return Status::InvalidInput(fmt::format("{} is the last layer and must have out = 1 (got {})", name, out));
    if (Status s = check_tensor(layer.weight, name + ".weight", {out, in}); !s.ok()) return s;
    if (Status s = check_tensor(layer.bias, name + ".bias", {out}); !s.ok()) return s;
    in = out;
  }
  return Status::Ok();
}

/// TorchScript source of forward with the layers unrolled: no loops over a ModuleList, which TorchScript built from
/// C++ (without Python's nn.Module machinery) cannot express.
std::string forward_source(std::size_t layers) {
  std::string src = "def forward(self, x: Tensor) -> Tensor:\n";
  src += "    h = (x - self.input_mean) / self.input_std\n";
  for (std::size_t i = 0; i < layers; ++i) {
    const std::string linear = fmt::format("torch.linear(h, self.fc{0}_weight, self.fc{0}_bias)", i);
    src += i + 1 < layers ? fmt::format("    h = torch.relu({})\n", linear) : fmt::format("    h = {}\n", linear);
  }
  src += "    return h.squeeze(1)\n";
  return src;
}

torch::Tensor owned_copy(const torch::Tensor& t) {
  return t.detach().clone().contiguous();
}

torch::Tensor uniform(std::mt19937_64& rng, std::vector<std::int64_t> shape, float bound) {
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  std::vector<float> values(static_cast<std::size_t>(count));
  std::uniform_real_distribution<float> dist(-bound, bound);
  for (float& v : values) v = dist(rng);
  return torch::from_blob(values.data(), shape, torch::kFloat32).clone();
}

struct DigestCtx {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~DigestCtx() { EVP_MD_CTX_free(ctx); }
};

/// Writes bytes to a fresh temporary file beside `path`. \return its name.
Result<std::string> write_temp_beside(const std::string& path, const std::string& bytes) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp = (dir == "/" ? "" : dir) + "/." + base + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return Status::IoError(fmt::format("{}: cannot create a temporary file in {}: {}", path, dir, errno_text()));
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  // 0644: readable by SlurmUser, writable only by the owner (the plugin refuses group/other-writable models).
  ok = ok && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  const std::string why = ok ? "" : errno_text();
  ok = (::close(fd) == 0) && ok;
  if (!ok) {
    ::unlink(tmp.c_str());
    return Status::IoError(fmt::format("{}: cannot write {}: {}", path, tmp, why.empty() ? errno_text() : why));
  }
  return tmp;
}

void fsync_directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename happened; durability across a crash is best effort
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

MlpSpec MlpSpec::Random(std::vector<std::string> names, const std::vector<int>& hidden, std::uint64_t seed) {
  MlpSpec spec;
  const auto width = static_cast<std::int64_t>(names.size());
  spec.features = std::move(names);
  spec.input_mean = torch::zeros({width});
  spec.input_std = torch::ones({width});
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> sizes{width};
  for (int h : hidden) sizes.push_back(h);
  sizes.push_back(1);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(std::max<std::int64_t>(sizes[i], 1)));
    spec.layers.push_back({uniform(rng, {sizes[i + 1], sizes[i]}, bound), uniform(rng, {sizes[i + 1]}, bound)});
  }
  return spec;
}

std::string MlpSpec::architecture() const {
  std::vector<std::int64_t> sizes{static_cast<std::int64_t>(features.size())};
  for (const MlpLayer& l : layers) sizes.push_back(l.weight.defined() ? l.weight.size(0) : 0);
  return fmt::format("mlp {} relu", fmt::join(sizes, "-"));
}

Result<torch::jit::Module> build_mlp_module(const MlpSpec& spec) {
  if (Status s = check_spec(spec); !s.ok()) return s;
  try {
    torch::jit::Module module("rlsched_mlp");
    module.register_buffer("input_mean", owned_copy(spec.input_mean));
    module.register_buffer("input_std", owned_copy(spec.input_std));
    for (std::size_t i = 0; i < spec.layers.size(); ++i) {
      module.register_parameter(fmt::format("fc{}_weight", i), owned_copy(spec.layers[i].weight).requires_grad_(true),
                                /*is_buffer=*/false);
      module.register_parameter(fmt::format("fc{}_bias", i), owned_copy(spec.layers[i].bias).requires_grad_(true),
                                /*is_buffer=*/false);
    }
    module.define(forward_source(spec.layers.size()));
    return module;
  } catch (const c10::Error& e) {
    return Status::Internal(fmt::format("build_mlp_module: {}", one_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("build_mlp_module: {}", one_line(e.what())));
  }
}

std::string weights_sha256(const torch::jit::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) tensors.emplace_back(p.name, p.value);
  for (const auto& b : module.named_buffers(/*recurse=*/true)) tensors.emplace_back(b.name, b.value);
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  DigestCtx digest;
  EVP_DigestInit_ex(digest.ctx, EVP_sha256(), nullptr);
  const auto update = [&](const void* data, std::size_t size) { EVP_DigestUpdate(digest.ctx, data, size); };
  for (auto& [name, value] : tensors) {
    torch::Tensor t = value.defined() ? value.detach().to(torch::kCPU).contiguous() : torch::Tensor();
    std::string header = name + '\0';
    if (t.defined())
      header += dtype_name(t.scalar_type()) + '\0' + fmt::format("{}", fmt::join(t.sizes(), ","));
    else
      header += std::string("undefined") + '\0';
    header += '\0';
    update(header.data(), header.size());
    if (t.defined() && t.numel() > 0) update(t.data_ptr(), static_cast<std::size_t>(t.numel()) * t.element_size());
  }
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(digest.ctx, hash, &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", hash[i]);
  return hex;
}

Status save_model(const std::string& path, torch::jit::Module module, ModelMetadata metadata) {
  const ModelMetadata defaults = ModelMetadata::ForFeatures(metadata.feature_names(), "");
  for (std::size_t i = 0; i < metadata.features.size(); ++i) {
    if (metadata.features[i].normalisation.empty())
      metadata.features[i].normalisation = defaults.features[i].normalisation;
  }
  if (metadata.created.empty()) metadata.created = utc_now_iso8601();
  metadata.weights_sha256 = weights_sha256(module);

  std::ostringstream archive;
  try {
    module.save(archive, {{kMetadataFile, metadata.to_json().dump(2)}});
  } catch (const c10::Error& e) {
    return Status::Internal(
        fmt::format("{}: cannot serialise the module: {}", path, one_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("{}: cannot serialise the module: {}", path, one_line(e.what())));
  }
  auto tmp = write_temp_beside(path, archive.str());
  if (!tmp.ok()) return tmp.status();

  // Verify with the loader's own checks. Loading sets one intra-op thread; a trainer keeps the count it had.
  const int threads = at::get_num_threads();
  auto loaded = load_model(*tmp);
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  if (!loaded.ok()) {
    ::unlink(tmp->c_str());
    std::string why = loaded.status().message();
    if (why.rfind(*tmp + ": ", 0) == 0) why = why.substr(tmp->size() + 2);
    return Status::InvalidInput(fmt::format("refusing to save {}: {}", path, why));
  }
  if (::rename(tmp->c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp->c_str());
    return Status::IoError(fmt::format("{}: cannot rename {} over it: {}", path, *tmp, why));
  }
  fsync_directory_of(path);
  return Status::Ok();
}

}  // namespace rlsched::policy
