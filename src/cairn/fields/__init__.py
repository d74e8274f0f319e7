"""Fields across the index: the facets of a search (:mod:`.facets`), hits as table
columns and their positions in their files (:mod:`.columns`), a term across every
conversation and note (:mod:`.terms`); :mod:`.service` is what ``cairn.fields`` holds."""
