// TODO(hostlist): being written
