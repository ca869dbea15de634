// TODO(sacct_reader): being written
