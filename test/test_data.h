// Where the tests' fixture files are: test/data, given to the compiler as RLSCHED_TEST_DATA.
#pragma once

#include <string>

namespace rlsched::test {

inline const std::string kData = RLSCHED_TEST_DATA;
/// Cluster descriptions: slurm.conf, gres.conf and rlsched cluster YAML.
inline const std::string kClusterData = kData + "/cluster/";

}  // namespace rlsched::test
