// How a policy score becomes Slurm's site factor, in one place for the site_factor plugin and the simulator.
//
// Scores are only comparable within one scoring call, so the site factor is a rank share: a job's site factor is
// floor(scale * below / n), where n is the size of the last scored batch (the whole pending queue) and `below` the
// number of its scores strictly lower than the job's score. The best job gets close to `scale`, the worst 0, ties
// get the same value, whatever the scores' units. A job submitted between two batches is ranked against the last
// batch. The simulator (sim/src/slurm_sim.cpp, priority_of) calls the same functions at scale weights.site (the
// score_scale of rlsched.yaml); the plugin writes NICE_OFFSET + this value to job_record_t::site_factor.
#pragma once

#include <cstdint>
#include <vector>

namespace rlsched {

/// floor(scale * (number of sorted_scores < score) / sorted_scores.size()); 0 when sorted_scores is empty.
/// `sorted_scores` is ascending.
std::uint32_t site_factor_of(double score, const std::vector<double>& sorted_scores, std::uint32_t scale);

/// Site factors of a whole batch: out[i] = site_factor_of(scores[i], sorted(scores), scale). `sorted` receives the
/// ascending scores (kept by callers to rank later single jobs). O(n log n).
void site_factors_of(const std::vector<double>& scores, std::uint32_t scale, std::vector<double>& sorted,
                     std::uint32_t* out);

/// How far two orders of the same jobs disagree (Kendall's distance): of the pairs that both order strictly, the
/// share that they order opposite ways. Pairs tied in either order do not count.
struct RankDisagreement {
  double share = 0;          ///< 0: the same order; 1: one reverses the other; 0 when `pairs` is 0
  std::uint64_t pairs = 0;   ///< pairs ordered strictly by both
};

/// a[i] and b[i] are two scores of job i (e.g. the learned policy's and Slurm's own multifactor priority).
/// O(n log n). The sizes must match (else: nothing to compare, {0, 0}).
RankDisagreement rank_disagreement(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace rlsched
