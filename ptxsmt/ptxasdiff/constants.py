"""Settings shared by the kernel writer, the reader and the runner."""

PTX_VERSION = "9.0"  # what ptxas 13.0 reads; older ptxas gets the newest it names
CASES_PER_KERNEL = 500
GUARD_EVERY = 25  # cases between two guard blocks
SLOT = 8  # bytes per output slot (every store is at most 8 bytes, 8-aligned)
