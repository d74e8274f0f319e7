"""The knowledge graph: link resolution, edges, traversal."""
