// TODO(workload_reader): being written
