"""Search: query language, lexical retrieval, snippets, explanations."""
