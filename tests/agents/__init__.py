"""Tests of the agent layer: protocol 2.0, agents, judge, agent server."""
