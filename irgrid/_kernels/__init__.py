"""Compiled Cython kernels (sources in the top-level cython_kernels/ folder)."""
