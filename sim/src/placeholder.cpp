namespace rlsched::sim {}
