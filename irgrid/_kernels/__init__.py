"""Compiled Cython kernels (sources in the top-level kernels/cython/ folder)."""
