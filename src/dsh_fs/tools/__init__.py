"""Placeholder for the tools layer (see AGENTS.md)."""
