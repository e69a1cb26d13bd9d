"""Runs: the SQLite run store and the run loop that drives the engine with an agent."""

from magma_core.runs.store import EpisodeRows, EpisodeSummary, RunStore

__all__ = ["EpisodeRows", "EpisodeSummary", "RunStore"]
