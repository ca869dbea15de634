// Running a loaded model: the hot path of the site_factor plugin (10,000 pending jobs in one call).
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model_impl.h"

namespace rlsched::policy {

void use_one_intra_op_thread() {
  static std::once_flag process;
  std::call_once(process, [] { at::set_num_threads(1); });
  thread_local const bool this_thread = [] {
    at::init_num_threads();  // applies the process-wide count to this thread's OpenMP setting
    return true;
  }();
  (void)this_thread;
}

std::string blas_performance_note() {
  // OpenBLAS picks its kernels from the CPU model at start-up. Virtual CPUs that hide their model ("Intel Xeon
  // Processor") get its SSE3 "Prescott" kernels even with AVX2/AVX-512: measured here, 3-4x slower matrix products.
  __builtin_cpu_init();
  using CoreName = char* (*)();
  void* blas = ::dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  auto core_name = reinterpret_cast<CoreName>(::dlsym(blas != nullptr ? blas : RTLD_DEFAULT, "openblas_get_corename"));
  const std::string core = core_name != nullptr ? core_name() : "";
  if (blas != nullptr) ::dlclose(blas);
  const bool pre_avx2_kernels = core == "Prescott" || core == "Core2" || core == "Penryn" || core == "Dunnington" ||
                                core == "Nehalem" || core == "Atom" || core == "Sandybridge";
  if (core.empty() || !pre_avx2_kernels || !__builtin_cpu_supports("avx2")) return "";
  return fmt::format(
      "OpenBLAS uses its {} kernels on this AVX2 CPU (a virtual CPU that hides its model): set OPENBLAS_CORETYPE={} "
      "in this process's environment for about 3x faster scoring of large queues",
      core, __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell");
}

std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float:
      return "float32";
    case c10::ScalarType::Double:
      return "float64";
    case c10::ScalarType::Half:
      return "float16";
    case c10::ScalarType::BFloat16:
      return "bfloat16";
    case c10::ScalarType::Long:
      return "int64";
    case c10::ScalarType::Int:
      return "int32";
    case c10::ScalarType::Short:
      return "int16";
    case c10::ScalarType::Char:
      return "int8";
    case c10::ScalarType::Byte:
      return "uint8";
    case c10::ScalarType::Bool:
      return "bool";
    default:
      return c10::toString(type);
  }
}

std::string one_line(std::string_view message) {
  constexpr std::string_view kInterpreter = "The following operation failed in the TorchScript interpreter";
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= message.size();) {
    std::size_t end = message.find('\n', start);
    if (end == std::string_view::npos) end = message.size();
    std::string_view line = message.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  if (lines.empty()) return "(no message)";
  std::string_view pick = message.find(kInterpreter) != std::string_view::npos ? lines.back() : lines.front();
  std::string out;
  for (char c : pick) out += (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? '?' : c;
  constexpr std::size_t kMax = 300;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

Status run_forward(torch::jit::Module& module, const float* rows, std::size_t n, std::size_t width, float* out) {
  use_one_intra_op_thread();
  try {
    c10::InferenceMode inference;
    // The profiling executor would re-optimise the graph after its first runs; a frozen MLP gains nothing from it,
    // and a fixed plan keeps the first call as fast and as exact as the rest. The setting is per thread.
    torch::jit::GraphOptimizerEnabledGuard fixed_plan(false);
    const auto rows_n = static_cast<std::int64_t>(n);
    // from_blob does not copy and forward does not write its input; const_cast only satisfies the signature.
    at::Tensor input = torch::from_blob(const_cast<float*>(rows), {rows_n, static_cast<std::int64_t>(width)},
                                        torch::TensorOptions().dtype(torch::kFloat32));
    const c10::IValue result = module.forward({input});
    if (!result.isTensor())
      return Status::InvalidInput(fmt::format("forward returned {}, expected a Tensor", result.tagKind()));
    at::Tensor scores = result.toTensor();
    if (scores.scalar_type() != torch::kFloat32)
      return Status::InvalidInput(
          fmt::format("forward returned dtype {}, expected float32", dtype_name(scores.scalar_type())));
    if (scores.dim() != 1 || scores.size(0) != rows_n)
      return Status::InvalidInput(
          fmt::format("forward returned shape [{}], expected [{}]", fmt::join(scores.sizes(), ", "), n));
    if (!scores.device().is_cpu())
      return Status::InvalidInput(fmt::format("forward returned a tensor on {}, expected cpu", scores.device().str()));
    scores = scores.contiguous();
    if (n > 0) std::memcpy(out, scores.data_ptr<float>(), n * sizeof(float));
    return Status::Ok();
  } catch (const c10::Error& e) {
    return Status::Internal(one_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {  // the interpreter reports shape errors as std::runtime_error
    return Status::Internal(one_line(e.what()));
  }
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const std::string& Model::path() const {
  return impl_->path;
}
const FileIdentity& Model::file() const {
  return impl_->file;
}
const ModelMetadata& Model::metadata() const {
  return impl_->metadata;
}
const features::FeatureMap& Model::feature_map() const {
  return impl_->feature_map;
}
const std::vector<std::string>& Model::notes() const {
  return impl_->notes;
}
bool Model::frozen() const {
  return impl_->frozen;
}

Status Model::forward(const float* rows, std::size_t n, float* out) const {
  Status s = run_forward(impl_->module, rows, n, impl_->feature_map.size(), out);
  if (s.ok()) return s;
  if (s.code() == Status::Code::kInternal)
    return Status::Internal(fmt::format("{}: forward failed: {}", impl_->path, s.message()));
  return Status::Internal(fmt::format("{}: {}", impl_->path, s.message()));
}

ScoreOutcome Model::score(const ScoringContext& context, const std::vector<PendingJob>& jobs,
                          std::vector<double>& scores) const {
  ScoreOutcome outcome;
  const std::size_t n = jobs.size();
  if (n == 0) return outcome;
  if (scores.size() < n) scores.resize(n);  // the Scorer contract sizes it; a short vector must not be overrun
  // Per thread, reused: the decay thread scores the whole queue every cycle, so its buffers stay warm.
  thread_local std::vector<float> rows;
  thread_local std::vector<float> out;
  rows.resize(n * impl_->feature_map.size());
  out.resize(n);
  impl_->feature_map.extract(jobs, context, rows.data());
  outcome.status = forward(rows.data(), n, out.data());
  if (!outcome.status.ok()) return outcome;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(out[i])) {
      scores[i] = out[i];
    } else {
      scores[i] = std::numeric_limits<double>::lowest();
      ++outcome.nonfinite_replaced;
    }
  }
  return outcome;
}

}  // namespace rlsched::policy
