// TODO(swf_reader): being written
