def test_a_dp_sgd_runs_units_give_the_delta_its_canaries_and_released_text_are_stated_at():
    import pandas as pd

    from plainsight.methods.trained import privacy_units

    docs = pd.DataFrame({"doc_id": ["a", "b", "c", "d"], "unit_id": ["p1", "p1", "p2", "p3"]})
    codes = pd.DataFrame(
        {
            "doc_id": ["a", "a", "b", "b", "c", "c", "d"],
            "segment": [0, 1, 0, 1, 0, 1, 0],
            "split": ["train"] * 6 + ["test"],
        }
    )
    # documents a, b (patient p1) and c (p2) train: 2 units; 6 training sequences
    assert privacy_units(docs, codes, "document") == 2
    assert privacy_units(docs, codes, "sequence") == 6
    assert dp_delta(None, privacy_units(docs, codes, "document")) == 1e-5
