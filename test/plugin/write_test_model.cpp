// write_test_model PATH [SEED]: writes a 23-64-64-1 policy model with random weights (through save_model, so it
// passes every load check), for trying the plugins in a lab slurmctld and for the end-to-end tests. Not a trained
// policy: its ranking is arbitrary but deterministic for a seed.
// write_test_model --longest-first PATH: a 1-1-1 model whose score is the limit_log feature (longest job first).
// write_test_model --predicted PATH: a 1-1-1 model whose score is the predicted_log feature (feature schema v2).
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int rlsched_test_write_model(const char* path, unsigned seed);
extern "C" int rlsched_test_write_longest_first_model(const char* path);
extern "C" int rlsched_test_write_predicted_model(const char* path);

int main(int argc, char** argv) {
  const bool longest_first = argc == 3 && std::strcmp(argv[1], "--longest-first") == 0;
  const bool predicted = argc == 3 && std::strcmp(argv[1], "--predicted") == 0;
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s PATH [SEED] | --longest-first PATH | --predicted PATH\n", argv[0]);
    return 2;
  }
  const bool hand_built = longest_first || predicted;
  const char* path = hand_built ? argv[2] : argv[1];
  const unsigned seed = argc == 3 && !hand_built ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 1;
  const int rc = longest_first ? rlsched_test_write_longest_first_model(path)
                 : predicted   ? rlsched_test_write_predicted_model(path)
                               : rlsched_test_write_model(path, seed);
  if (rc != 0) {
    std::fprintf(stderr, "%s: cannot write a model to %s\n", argv[0], path);
    return 1;
  }
  return 0;
}
