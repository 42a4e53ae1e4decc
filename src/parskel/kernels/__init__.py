"""OpenCL C kernel sources, shipped as package data (one folder per family)."""
