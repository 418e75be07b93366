"""Placeholder for the workspace layer (see AGENTS.md)."""
