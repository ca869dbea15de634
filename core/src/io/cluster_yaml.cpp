// TODO(cluster_yaml): being written
