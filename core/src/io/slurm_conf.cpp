// TODO(slurm_conf): being written
