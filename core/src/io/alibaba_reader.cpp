// TODO(alibaba_reader): being written
