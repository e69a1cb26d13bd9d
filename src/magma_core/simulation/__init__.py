"""Scenario contract (data structures, stages, goals, errors, tools, tasks) and the engine."""
