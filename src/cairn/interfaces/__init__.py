"""Thin interfaces over cairn.app.Cairn: CLI (and later HTTP, MCP, web)."""
