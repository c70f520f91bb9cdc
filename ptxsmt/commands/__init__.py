"""Larger CLI commands, each in its own module and registered in ptxsmt.cli."""
