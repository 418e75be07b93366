"""Placeholder for the providers layer (see AGENTS.md)."""
