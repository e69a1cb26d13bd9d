"""Wire protocols spoken with external components; ``agent`` holds the agent protocol 2.0."""
