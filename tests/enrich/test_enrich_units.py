
def test_the_stores_kind_list_is_the_models() -> None:
    from cairn.model.enrich import ENRICHMENT_KINDS
    from cairn.store.sql.enrich import _KINDS

    assert ",".join(f"'{k}'" for k in ENRICHMENT_KINDS) == _KINDS
