// Bad options.
// ALIGN: error: --fluid-plan-memory: alignment must be a power of two, got 48
// WORKSPACE: error: --fluid-plan-memory: workspace-limit must be -1 (none) or a size in MiB up to 2^30, got -2
