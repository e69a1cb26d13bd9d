"""Reusable scenario building blocks (the predecessor's ``magma_scenarios.templates``)."""
