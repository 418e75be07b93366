"""Placeholder for the policy layer (see AGENTS.md)."""
