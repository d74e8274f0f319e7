"""Notes as programs and agents ask for them: show a reference, the text of a file
or a document, the index at a glance, checks; and what the doors need on top (paths
confined to the roots, provenance of quoted text, recent changes)."""
