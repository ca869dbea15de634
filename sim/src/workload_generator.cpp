// The workload families of docs/workload-generator.md. Every draw goes through Random (below) so that a seed gives
// the same workload with any standard library: std::*_distribution output is left to the implementation.
#include "rlsched/sim/workload_generator.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "rlsched/sim/evaluation.h"

namespace rlsched::sim {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr Seconds kMinute = 60, kHour = 3600, kDay = 86400;

class Random {
 public:
  explicit Random(std::uint64_t seed) : rng_(seed) {}
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  int integer(int lo, int hi) { return lo + static_cast<int>(std::floor(unit() * (hi - lo + 1))); }  // [lo, hi]
  bool chance(double p) { return unit() < p; }
  double normal() {  // Box-Muller; the two draws in sequence, as one expression would leave their order open
    const double radius = std::sqrt(-2.0 * std::log(1.0 - unit()));
    return radius * std::cos(2.0 * kPi * unit());
  }
  double exponential(double mean) { return -mean * std::log(1.0 - unit()); }
  // Marsaglia and Tsang (2000); shape < 1 by the boost U^(1/shape).
  double gamma(double shape, double scale) {
    if (shape < 1) return gamma(shape + 1, scale) * std::pow(1.0 - unit(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = normal(), v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = 1.0 - unit();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
    }
  }
  // Gamma with this mean and standard deviation (the hyper-gamma components are given so).
  double gamma_mean_sd(double mean, double sd) { return gamma((mean / sd) * (mean / sd), sd * sd / mean); }
  std::size_t pick(const std::vector<double>& weights) {
    double total = 0;
    for (double w : weights) total += w;
    double u = unit() * total;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (u < weights[i]) return i;
      u -= weights[i];
    }
    return weights.size() - 1;
  }

 private:
  std::mt19937_64 rng_;  // its output sequence is fixed by the standard
};

// Accelerator models, relative to a V100: compute-bound work scales with `compute`, memory-bound with `memory`.
struct TypeModel {
  const char* name;
  double compute;
  double memory;
};
constexpr TypeModel kTypeModels[] = {
    {"k80", 0.25, 0.45}, {"p100", 0.55, 0.7}, {"v100", 1.0, 1.0}, {"a100", 2.4, 1.5}, {"h200", 5.0, 1.7}};
constexpr int kTypeModelCount = 5;

// Job classes and how compute-bound they are (1: speed follows compute; 0: follows memory bandwidth).
struct ClassModel {
  const char* name;
  double compute_bound;
};
constexpr ClassModel kClassModels[] = {
    {"cnn-train", 0.9}, {"transformer-train", 0.95}, {"llm-finetune", 0.85}, {"inference-batch", 0.6},
    {"md-sim", 0.7},    {"gnn-train", 0.4},          {"rl-sim", 0.3},        {"recsys-train", 0.15},
    {"cfd-solver", 0.2}};
constexpr int kClassModelCount = 9;

struct User {
  double weight = 1;
  int size = 1;           // CPUs (CPU family) or GPUs (GPU family) the user typically asks for
  double log_run = 0;     // typical ln(run time on the slowest type)
  double max_limit = 0;   // chance that the user asks for the maximum limit
  double accuracy = 0.5;  // typical run time / limit
  int job_class = -1;     // GPU family
  int type = -1;          // GPU family: the type the user names, -1: typeless
};

struct Shape {                 // what the size model draws from
  int widest = 1;              // CPUs of the cluster, or GPUs of the smallest partition
  std::vector<int> gpu_sizes;  // GPU family: counts and their weights
  std::vector<double> gpu_weights;
};

struct Model {
  GeneratorParams p;
  double daily_peak_hour = 14;
  double nonround_share = 0;
  double habit_run_sd = 0.5;
  double short_sd = 1.9, long_sd = 0.6;
  int gpus_per_node = 8;
  std::vector<int> type_models;  // GPU family: indices into kTypeModels, slowest first
  std::vector<int> classes;      // GPU family: indices into kClassModels
  std::vector<double> class_bound;
  std::vector<double> class_weights;
  // Which type a typed request names: in proportion to the type's GPUs. Weighting fast types up (everyone wants the
  // newest GPU) left the fastest partition oversubscribed (a100 busy 0.97, k80 0.36 on gpu seed 2 at load 0.8), a
  // queue that never drains; the pull to fast types shows in typeless placement instead.
  std::vector<double> typed_weights;
  Shape shape;
};

int draw_cpu_size(Random& r, const Model& m) {
  const int widest = m.shape.widest;
  if (widest <= 1 || r.chance(m.p.serial_share)) return 1;
  const double hi = std::log2(static_cast<double>(widest)), lo = std::min(0.8, hi);  // Lublin's u_low = 0.8
  const double split = std::clamp(m.p.size_split, lo, hi);
  const double x = r.chance(m.p.size_low_share) ? r.uniform(lo, split) : r.uniform(split, hi);
  const int size = r.chance(m.p.power_of_two_share) ? 1 << static_cast<int>(std::lround(x))
                                                    : static_cast<int>(std::lround(std::exp2(x)));
  return std::clamp(size, 2, widest);
}

int draw_gpu_size(Random& r, const Model& m) {
  int size = m.shape.gpu_sizes[r.pick(m.shape.gpu_weights)];
  while (size > m.shape.widest) size /= 2;  // counts stay powers of two
  return size;
}

// ln(run time): Lublin's hyper-gamma, the short component's share falling linearly in log2 of the size.
double draw_log_run(Random& r, const Model& m, int size) {
  const double widest = std::log2(std::max(2.0, static_cast<double>(m.shape.widest)));
  const double frac = std::clamp(std::log2(std::max(1.0, static_cast<double>(size))) / widest, 0.0, 1.0);
  const double short_share = m.p.short_share_serial + (m.p.short_share_widest - m.p.short_share_serial) * frac;
  return r.chance(short_share) ? r.gamma_mean_sd(m.p.short_mean_log, m.short_sd)
                               : r.gamma_mean_sd(m.p.long_mean_log, m.long_sd);
}

Seconds clamp_run(double log_run, Seconds max_limit) {
  return std::clamp<Seconds>(static_cast<Seconds>(std::llround(std::exp(std::min(log_run, 40.0)))), 1, max_limit);
}

// The limit a user asks for a job that runs `run` seconds (Tsafrir et al. 2005): the maximum out of habit, else the
// run time over the user's accuracy, rounded up to a popular value, or now and then to a minute.
Seconds draw_limit(Random& r, const Model& m, const User& u, Seconds run) {
  const Seconds max = m.p.max_limit;
  if (run >= max || r.chance(u.max_limit)) return max;
  const double accuracy = std::clamp(u.accuracy * std::exp(0.5 * r.normal()), 0.02, 1.0);
  const double wanted = static_cast<double>(run) / accuracy;
  Seconds limit = max;
  if (r.chance(m.nonround_share)) {
    limit = static_cast<Seconds>(std::ceil(wanted / kMinute)) * kMinute;
  } else {
    for (Seconds v : round_time_limits())
      if (static_cast<double>(v) >= wanted) {
        limit = v;
        break;
      }
  }
  return std::clamp(limit, run, max);
}

// A job killed at its limit: its user asked for too little. The limit becomes the round value below the run, where
// the run then stops; killing shortens runs rather than stretching them to the limit, which would turn the jobs that
// asked for the maximum out of habit into multi-day hogs. A run shorter than every round value is left alone.
void kill_at_limit(Job& job) {
  Seconds below = 0;
  for (Seconds v : round_time_limits())
    if (v < job.run_time) below = v;
  if (below == 0) return;
  job.time_limit = below;
  job.run_time = below;
}

void draw_common(Random& r, const GeneratorSpec& spec, Model& m) {
  GeneratorParams& p = m.p;
  // Drawn even when the spec fixes them, so that an override changes only itself, not every draw after it.
  const double load = r.uniform(0.5, 0.95);
  const int cpus = 1 << r.integer(6, 13);
  p.load = spec.load ? *spec.load : load;
  p.cpus = spec.cpus ? *spec.cpus : cpus;
  p.users = std::clamp(static_cast<int>(std::lround(std::sqrt(static_cast<double>(spec.jobs)) * r.uniform(0.5, 1.5))),
                       4, 500);
  p.serial_share = r.uniform(0.05, 0.35);      // Lublin: 0.24 of batch jobs
  p.power_of_two_share = r.uniform(0.5, 0.9);  // Lublin: 0.75
  p.size_low_share = r.uniform(0.8, 0.95);     // Lublin: 0.86
  p.short_mean_log = r.uniform(3.5, 5.0);      // Lublin: 4.2 * 0.94 = 3.95 (about a minute)
  m.short_sd = r.uniform(1.5, 2.2);            // Lublin: sqrt(4.2) * 0.94 = 1.93
  p.long_mean_log = r.uniform(8.0, 10.0);      // Lublin: 312 * 0.03 = 9.36 (about 3 h)
  m.long_sd = r.uniform(0.5, 1.2);             // Lublin: sqrt(312) * 0.03 = 0.53
  p.short_share_serial = r.uniform(0.6, 0.9);  // Lublin: 0.78 for one node
  const double short_share_widest = r.uniform(0.05, 0.3);
  p.short_share_widest = spec.short_share_widest ? *spec.short_share_widest : short_share_widest;
  m.daily_peak_hour = r.uniform(11, 15);
  p.daily_amplitude = r.uniform(0.3, 0.8);
  p.burst_share = r.uniform(0.02, 0.25);
  p.max_limit_share = r.uniform(0.05, 0.25);
  p.killed_share = r.uniform(0.01, 0.08);
  m.nonround_share = r.uniform(0.02, 0.12);
  p.habit_share = r.uniform(0.5, 0.9);
  m.habit_run_sd = r.uniform(0.3, 0.8);
  static constexpr Seconds kMaxLimits[] = {kDay, 2 * kDay, 3 * kDay, 5 * kDay};
  p.max_limit = kMaxLimits[r.integer(0, 3)];
}

Cluster cpu_cluster(Random& r, Model& m) {
  static constexpr int kPerNode[] = {8, 16, 32, 64, 128};
  int per_node = kPerNode[r.integer(0, 4)];
  while (per_node > 1 && (m.p.cpus % per_node != 0 || m.p.cpus / per_node < 4)) per_node /= 2;
  m.p.cpus_per_node = per_node;
  m.p.size_split = std::log2(static_cast<double>(m.p.cpus)) - r.uniform(2.0, 3.5);  // Lublin: u_hi - 2.5
  m.shape.widest = m.p.cpus;
  Cluster cluster = Cluster::Homogeneous(m.p.cpus / per_node, per_node);
  cluster.name = "generated-cpu";
  cluster.priority = PriorityWeights::Typical();  // what implied_cluster gives the SWF this is written as
  return cluster;
}

Cluster gpu_cluster(Random& r, Model& m) {
  const int count = r.integer(2, 4);
  const int first = r.integer(0, kTypeModelCount - count);
  for (int t = first; t < first + count; ++t) m.type_models.push_back(t);
  int per_gpu = 1 << r.integer(2, 4);  // 4, 8 or 16 CPUs per GPU
  while (per_gpu > 1 && m.p.cpus / (per_gpu * m.gpus_per_node) < 2 * count) per_gpu /= 2;
  const int per_node = per_gpu * m.gpus_per_node;
  const int nodes = std::max(count, m.p.cpus / per_node);
  m.p.cpus_per_node = per_node;

  // Job classes and their speeds on each type, the slowest type 1.0.
  std::vector<int> order(kClassModelCount);
  for (int i = 0; i < kClassModelCount; ++i) order[i] = i;
  for (int i = kClassModelCount - 1; i > 0; --i) std::swap(order[i], order[r.integer(0, i)]);
  order.resize(r.integer(4, kClassModelCount));
  std::sort(order.begin(), order.end());
  m.classes = order;
  for (int c : m.classes) {
    m.class_bound.push_back(std::clamp(kClassModels[c].compute_bound + r.uniform(-0.1, 0.1), 0.0, 1.0));
    m.class_weights.push_back(r.uniform(0.2, 1.0));
  }
  Cluster cluster;
  cluster.name = "generated-gpu";
  const TypeModel& slowest = kTypeModels[m.type_models.front()];
  std::vector<double> weights;
  for (int t : m.type_models) {
    const TypeModel& model = kTypeModels[t];
    AcceleratorType type;
    type.name = model.name;
    type.gres = "gpu";
    double log_sum = 0;
    for (std::size_t c = 0; c < m.classes.size(); ++c) {
      const double b = m.class_bound[c];
      const double speed =
          std::pow(model.compute / slowest.compute, b) * std::pow(model.memory / slowest.memory, 1 - b);
      type.class_speed[kClassModels[m.classes[c]].name] = std::round(speed * 1000) / 1000;
      log_sum += std::log(type.class_speed[kClassModels[m.classes[c]].name]);
    }
    type.speed = std::round(std::exp(log_sum / static_cast<double>(m.classes.size())) * 1000) / 1000;
    cluster.accelerator_types.push_back(std::move(type));
    m.p.accelerator_types.push_back(model.name);
    weights.push_back(r.uniform(0.5, 1.5));
  }
  // Nodes per type, at least one each.
  const double total_weight = [&] {
    double s = 0;
    for (double w : weights) s += w;
    return s;
  }();
  std::vector<int> per_type(count);
  int assigned = 0;
  for (int t = 0; t < count; ++t) {
    per_type[t] = std::max(1, static_cast<int>(std::floor(nodes * weights[t] / total_weight)));
    assigned += per_type[t];
  }
  for (int t = 0; assigned < nodes; t = (t + 1) % count, ++assigned) ++per_type[t];
  int smallest = per_type.front();
  for (int t = 0; t < count; ++t) {
    Partition partition;
    partition.name = cluster.accelerator_types[t].name;
    partition.max_time = m.p.max_limit;
    partition.is_default = t == 0;
    for (int k = 1; k <= per_type[t]; ++k) {
      partition.nodes.push_back(static_cast<int>(cluster.nodes.size()));
      cluster.nodes.push_back(Node{fmt::format("{}-{}", partition.name, k),
                                   per_node,
                                   static_cast<std::int64_t>(per_node) * 4096,
                                   {GresCount{"gpu", partition.name, m.gpus_per_node}}});
    }
    smallest = std::min(smallest, per_type[t]);
    cluster.partitions.push_back(std::move(partition));
  }
  m.p.cpus = static_cast<int>(cluster.nodes.size()) * per_node;
  for (int t = 0; t < count; ++t) m.typed_weights.push_back(per_type[t]);
  cluster.qos.push_back(Qos{"normal", 0});
  cluster.priority = PriorityWeights::Typical();
  m.p.typed_share = r.uniform(0.3, 0.8);
  // GPU counts: 1, 2, 4, 8 on one node, 16 to 64 over several; every size fits the smallest partition.
  m.shape.widest = smallest * m.gpus_per_node;
  m.shape.gpu_sizes = {1, 2, 4, 8, 16, 32, 64};
  const double multi = r.uniform(0.02, 0.12);
  m.shape.gpu_weights = {r.uniform(0.3, 0.6), r.uniform(0.08, 0.2), r.uniform(0.08, 0.2), r.uniform(0.08, 0.2),
                         multi * 0.6,         multi * 0.3,          multi * 0.1};
  return cluster;
}

std::vector<User> draw_users(Random& r, const Model& m, bool gpu) {
  std::vector<User> users(static_cast<std::size_t>(m.p.users));
  const double zipf = r.uniform(0.8, 1.3);
  for (std::size_t i = 0; i < users.size(); ++i) {
    User& u = users[i];
    u.weight = 1.0 / std::pow(static_cast<double>(i + 1), zipf);
    u.size = gpu ? draw_gpu_size(r, m) : draw_cpu_size(r, m);
    u.log_run = draw_log_run(r, m, u.size);
    u.max_limit = std::min(1.0, m.p.max_limit_share * r.uniform(0.0, 2.0));
    u.accuracy = r.uniform(0.1, 0.9);
    if (gpu) {
      u.job_class = static_cast<int>(r.pick(m.class_weights));
      if (r.chance(m.p.typed_share)) u.type = static_cast<int>(r.pick(m.typed_weights));
    }
  }
  return users;
}

// Submission times of `events` submissions whose mean rate follows a daily cycle, `span` seconds on average.
std::vector<double> draw_arrivals(Random& r, const Model& m, std::size_t events, double span) {
  const double rate = static_cast<double>(events) / std::max(span, 1.0);
  const double a = m.p.daily_amplitude, peak = m.daily_peak_hour * kHour;
  std::vector<double> times;
  times.reserve(events);
  double t = 0;
  while (times.size() < events) {  // thinning of a Poisson process at the peak rate
    t += r.exponential(1.0 / (rate * (1 + a)));
    const double phase = 2 * kPi * (std::fmod(t, static_cast<double>(kDay)) - peak) / static_cast<double>(kDay);
    if (r.chance((1 + a * std::cos(phase)) / (1 + a))) times.push_back(t);
  }
  return times;
}

}  // namespace

const char* to_string(WorkloadFamily family) {
  return family == WorkloadFamily::kGpu ? "gpu" : "cpu";
}

Result<WorkloadFamily> parse_workload_family(const std::string& text) {
  if (text == "cpu") return WorkloadFamily::kCpu;
  if (text == "gpu") return WorkloadFamily::kGpu;
  return Status::InvalidInput(fmt::format("unknown workload family '{}' (known: cpu, gpu)", text));
}

const std::vector<Seconds>& round_time_limits() {
  static const std::vector<Seconds> kValues = {
      5 * kMinute,  10 * kMinute, 15 * kMinute, 20 * kMinute, 30 * kMinute, 45 * kMinute, kHour,
      90 * kMinute, 2 * kHour,    3 * kHour,    4 * kHour,    5 * kHour,    6 * kHour,    8 * kHour,
      10 * kHour,   12 * kHour,   16 * kHour,   18 * kHour,   20 * kHour,   kDay,         30 * kHour,
      36 * kHour,   2 * kDay,     60 * kHour,   3 * kDay,     4 * kDay,     5 * kDay};
  return kValues;
}

Result<GeneratedWorkload> generate_workload(const GeneratorSpec& spec) {
  if (spec.jobs == 0) return Status::InvalidInput("jobs must be > 0");
  if (spec.jobs > 10'000'000) return Status::InvalidInput(fmt::format("jobs must be <= 10000000 (got {})", spec.jobs));
  if (spec.load && !(*spec.load > 0 && *spec.load <= 10))
    return Status::InvalidInput(fmt::format("load must be in (0, 10] (got {})", *spec.load));
  if (spec.cpus && (*spec.cpus < 8 || *spec.cpus > 1048576))
    return Status::InvalidInput(fmt::format("cpus must be in [8, 1048576] (got {})", *spec.cpus));
  if (spec.short_share_widest && !(*spec.short_share_widest >= 0 && *spec.short_share_widest <= 1))
    return Status::InvalidInput(
        fmt::format("short share of the widest jobs must be in [0, 1] (got {})", *spec.short_share_widest));
  const bool gpu = spec.family == WorkloadFamily::kGpu;
  // The family is mixed into the seed so that cpu and gpu workloads of one seed are not drawn from one stream.
  Random r(spec.seed * 2 + (gpu ? 1 : 0));
  Model m;
  draw_common(r, spec, m);
  GeneratedWorkload out;
  out.cluster = gpu ? gpu_cluster(r, m) : cpu_cluster(r, m);
  const Cluster& cluster = out.cluster;
  const std::vector<User> users = draw_users(r, m, gpu);
  std::vector<double> user_weights;
  for (const User& u : users) user_weights.push_back(u.weight);

  // Jobs in submission groups: a group is one job, or a batch a user submits at once (a parameter sweep).
  std::vector<Job>& jobs = out.workload.jobs;
  jobs.reserve(spec.jobs);
  std::vector<std::size_t> group_start;
  double work = 0;
  std::vector<double> typed_work(cluster.accelerator_types.size());  // GPU-seconds of jobs naming each type
  double total_typed_weight = 0;
  for (double w : m.typed_weights) total_typed_weight += w;
  while (jobs.size() < spec.jobs) {
    const std::size_t ui = r.pick(user_weights);
    const User& u = users[ui];
    const bool burst = r.chance(m.p.burst_share);
    const std::size_t batch =
        burst ? std::min<std::size_t>(
                    spec.jobs - jobs.size(),
                    static_cast<std::size_t>(std::lround(std::exp(r.uniform(std::log(2.0), std::log(64.0))))))
              : 1;
    const bool habit = r.chance(m.p.habit_share);
    int size = habit ? u.size : (gpu ? draw_gpu_size(r, m) : draw_cpu_size(r, m));
    if (habit && !gpu && size > 1 && r.chance(0.25))
      size = std::clamp(r.chance(0.5) ? size * 2 : size / 2, 1, m.shape.widest);
    const double log_run = habit ? u.log_run + m.habit_run_sd * r.normal() : draw_log_run(r, m, size);
    // The run time on the slowest type the job allows.
    const Seconds slow_run = clamp_run(log_run, m.p.max_limit);
    Job base;
    base.user = fmt::format("u{}", ui);
    base.account = fmt::format("g{}", ui % std::max<std::size_t>(1, users.size() / 5));
    int type = -1;  // GPU family: the type the job ran on
    double slowest_speed = 1, ran_speed = 1;
    if (gpu) {
      const int job_class = habit ? u.job_class : static_cast<int>(r.pick(m.class_weights));
      base.job_class = kClassModels[m.classes[job_class]].name;
      base.qos = "normal";
      base.accel = AcceleratorRequest{size, "gpu", {}};
      base.nodes = std::max(1, size / m.gpus_per_node);
      base.cpus = size * (m.p.cpus_per_node / m.gpus_per_node);
      bool typed = habit ? u.type >= 0 : r.chance(m.p.typed_share);
      if (typed) {
        type = habit ? u.type : static_cast<int>(r.pick(m.typed_weights));
        // The jobs that name a type never ask more of it than its share of the GPUs times all the work so far: a
        // heavy user pinned to one type made that partition's queue grow without end (v100 busy 0.96, p100 0.40 on
        // gpu seed 2 at load 0.8). Past that, the user takes any type.
        const double w = static_cast<double>(size) * static_cast<double>(slow_run) * static_cast<double>(batch);
        typed = typed_work[static_cast<std::size_t>(type)] + w <=
                m.typed_weights[static_cast<std::size_t>(type)] / total_typed_weight * (work + w);
      }
      if (typed) {
        base.accel.types = {cluster.accelerator_types[type].name};
        base.partitions = {cluster.accelerator_types[type].name};
        slowest_speed = cluster.accelerator_types[type].speed_for(base.job_class);
      } else {
        std::vector<double> capacity;
        for (const Partition& p : cluster.partitions) capacity.push_back(static_cast<double>(p.nodes.size()));
        type = static_cast<int>(r.pick(capacity));
        for (const Partition& p : cluster.partitions) base.partitions.push_back(p.name);
        slowest_speed = cluster.accelerator_types.front().speed_for(base.job_class);
      }
      base.ran_on_type = cluster.accelerator_types[type].name;
      ran_speed = cluster.accelerator_types[type].speed_for(base.job_class);
    } else {
      base.cpus = size;
    }
    // The limit is set for this run, as a user who may land there would.
    const Seconds limit =
        draw_limit(r, m, u, static_cast<Seconds>(std::ceil(static_cast<double>(slow_run) * (burst ? 1.2 : 1.0))));
    group_start.push_back(jobs.size());
    for (std::size_t k = 0; k < batch; ++k) {
      Job job = base;
      const double spread = burst ? std::exp(0.15 * r.normal()) : 1.0;  // a sweep's runs are alike
      const double slow = std::min(static_cast<double>(slow_run) * spread, static_cast<double>(limit));
      job.run_time = std::max<Seconds>(1, std::llround(slow * slowest_speed / ran_speed));
      job.time_limit = limit;
      if (r.chance(m.p.killed_share)) kill_at_limit(job);
      job.run_time = std::min(job.run_time, job.time_limit);
      work += static_cast<double>(gpu ? job.accel.count : job.cpus) * static_cast<double>(job.run_time);
      if (!job.accel.types.empty())
        typed_work[static_cast<std::size_t>(type)] += static_cast<double>(job.accel.count * job.run_time);
      jobs.push_back(std::move(job));
    }
  }

  // Arrivals: the mean gap that offers the target load, a daily cycle, sweeps submitted seconds apart.
  double capacity = 0;
  for (const Node& n : cluster.nodes) capacity += gpu ? n.gres.front().count : n.cpus;
  const double span = work / (capacity * m.p.load);
  const std::vector<double> times = draw_arrivals(r, m, group_start.size(), span);
  group_start.push_back(jobs.size());
  for (std::size_t g = 0; g + 1 < group_start.size(); ++g) {
    double t = times[g];
    for (std::size_t i = group_start[g]; i < group_start[g + 1]; ++i) {
      jobs[i].submit = static_cast<Seconds>(std::floor(t));
      t += r.integer(0, 10);
    }
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].id = static_cast<JobId>(i + 1);
  // The draws give about the target; stretching the gaps by the remaining factor (close to 1) makes it exact.
  if (jobs.size() > 1 && jobs.front().submit < jobs.back().submit) {
    if (auto scaled = scale_to_load(jobs, cluster, m.p.load); !scaled.ok()) return scaled.status();
  }
  out.offered_load = offered_load(jobs, cluster);
  Workload& w = out.workload;
  w.report.source = fmt::format("generated(family={}, seed={}, jobs={})", to_string(spec.family), spec.seed, spec.jobs);
  w.report.records = w.report.used = jobs.size();
  if (!gpu) {
    w.max_nodes = static_cast<int>(cluster.nodes.size());
    w.max_procs = cluster.total_cpus();
  }
  out.params = m.p;
  return out;
}

}  // namespace rlsched::sim
