"""Compiling a model into a plan and running it."""
