"""Multi-process data parallelism on MPI (and NCCL for GPU all-reduce)."""
