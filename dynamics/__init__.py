"""Recursive O(N) multibody dynamics on SKO models (seeds 001, 002, 003)."""
