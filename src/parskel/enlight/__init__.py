"""Enlight: ray casting of a stock volume minus many subtraction volumes (seed 001, part 2)."""
