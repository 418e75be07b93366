"""Placeholder for the adapters layer (see AGENTS.md)."""
