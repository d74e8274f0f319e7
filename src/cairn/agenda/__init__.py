"""The agenda: an Org-agenda-style view of the index, day by day (:mod:`.service`)."""
