"""Placeholder for the cli layer (see AGENTS.md)."""
