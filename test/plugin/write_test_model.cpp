// write_test_model PATH [SEED]: writes a 21-64-64-1 policy model with random weights (through save_model, so it
// passes every load check), for trying the plugins in a lab slurmctld and for the end-to-end tests. Not a trained
// policy: its ranking is arbitrary but deterministic for a seed.
#include <cstdio>
#include <cstdlib>

extern "C" int rlsched_test_write_model(const char* path, unsigned seed);

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s PATH [SEED]\n", argv[0]);
    return 2;
  }
  const unsigned seed = argc == 3 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 1;
  if (rlsched_test_write_model(argv[1], seed) != 0) {
    std::fprintf(stderr, "%s: cannot write a model to %s\n", argv[0], argv[1]);
    return 1;
  }
  return 0;
}
