"""Placeholder for the mcp layer (see AGENTS.md)."""
